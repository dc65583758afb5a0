"""The order in which a natural-error study judges its documents: wrong and right alternately.

    .venv/bin/python -m construct_eval.studies.balanced_order RUN [--batch 20] [--first N]

Prints the run's labelled, parsed documents as comma lists of ids, ``--batch`` ids a line, for
``construct-eval score/verdict/reflect --ids``: the first wrong document, the first right one, the
second wrong one, the second right one, and so on in the run's order; once one class runs out, the
rest of the other class in the run's order. With ``--first N`` only the first N of that order.

Why: the judge takes a minute or more a document on the one-slot local server, so a study's judging
is stopped and resumed many times. Judged in this order, whatever has been judged when it stops
has both classes in equal numbers (up to the smaller class), so detection can be read at any
point, and a study that judges every wrong document and as many right ones (the cheaper design,
prevalence about 50%) is a prefix of one that judges them all (the run's own prevalence). The
judge never sees a label: the labels only decide which documents are judged first.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from itertools import zip_longest
from pathlib import Path

from construct_eval.data.runs import RunDir


def balanced_order(labels: Sequence[dict[str, object]]) -> list[str]:
    """Ids alternating wrong and right documents (run order within each class), then the rest of
    the larger class; documents whose output did not parse are left out (nothing to judge)."""
    parsed = [r for r in labels if not r.get("parse_failed")]
    wrong = [str(r["id"]) for r in parsed if r["wrong"]]
    right = [str(r["id"]) for r in parsed if not r["wrong"]]
    return [i for pair in zip_longest(wrong, right) for i in pair if i is not None]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path)
    p.add_argument("--batch", type=int, default=20, help="ids a line")
    p.add_argument("--first", type=int, default=None, help="only the first N documents of the order")
    args = p.parse_args(argv)
    labels = list(RunDir(args.run, create=False).iter_rows("labels"))
    if not labels:
        sys.exit(f"{args.run}: no labels (run construct-eval label first)")
    order = balanced_order(labels)[: args.first]
    for start in range(0, len(order), args.batch):
        print(",".join(order[start : start + args.batch]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
