"""From a trust score to a decision with a guarantee (issue 33).

- :mod:`.bounds`: valid p-values (binomial tail, Hoeffding-Bentkus, betting) and fixed-sequence testing;
- :mod:`.thresholds`: auto-accept thresholds by Learn-then-Test, per document and per field
  (the document is the sampling unit), or "no threshold at this n" with the n it would need;
- :mod:`.validity`: the guarantee checked over random document splits, beside the naive rule;
- :mod:`.selective`: risk-coverage curves and AURC with oracle, random and bootstrap intervals;
- :mod:`.few_labels`: error rates from few labels by prediction-powered inference (ppi-python);
- :mod:`.learning`: calibration learning curves and the smooth ECE (relplot);
- :mod:`.report`: :func:`decide` and its :class:`DecisionReport`; :mod:`.stored`: a run's stored
  tables; :mod:`.findings`: the Markdown paragraph from them.

It reads runs through :mod:`construct_eval.reports` and sits above it in the import layers.
"""

import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    """This package, callable as :func:`construct_eval.decide.report.decide`.

    ``decide`` is both the public function (``from construct_eval import decide``, a lazy name)
    and this subpackage. Once the subpackage is imported (``from construct_eval import Policy``
    imports it), Python's import system binds it to ``construct_eval.decide``, and the import of
    the public name then returns this module instead of the function: calling it calls the
    function, so ``decide(run, scorer, alpha=...)`` works whichever was imported first."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from construct_eval.decide.report import decide

        return decide(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
