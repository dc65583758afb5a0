"""Paper tables: the numbers behind each paper figure as LaTeX (booktabs) and CSV twins.

A cell reads "0.77 [0.74, 0.81]" (estimate and 95% document-bootstrap interval). A scorer is
marked best in a dataset's column only where its paired difference against the runner-up, on
the items both scored, excludes zero after Holm correction across the table's comparisons:
the same paired bootstrap as ``construct-eval paired``, recomputed from the run's stored rows
(judgments, scores, labels), never from the rounded table. Baselines that use the labels are
shown but never compete for best, and neither do underpowered rows (marked with a dagger; see
:data:`construct_eval.power.MIN_CLASS_ITEMS`); field-level scorers are compared only with
scorers read on the same items (``@leaf`` with ``@leaf``).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from construct_eval.types import ScorerId

_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "|": r"\textbar{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    """``text`` safe inside a LaTeX cell (scorer names carry ``_ | [ ] @ %``)."""
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in str(text))


def fmt_value(value: float, digits: int = 2) -> str:
    return "--" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def fmt_estimate(value: float, low: float, high: float, digits: int = 2) -> str:
    """``0.77 [0.74, 0.81]``; the estimate alone where there is no interval."""
    if math.isnan(value):
        return "--"
    if math.isnan(low) or math.isnan(high):
        return fmt_value(value, digits)
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


TEXT_WIDTH_IN = 5.5
"""The text width every LaTeX table fits (NeurIPS; ICML's and ACL's two-column pages take
``table*`` at their text width, which is wider)."""
TABCOLSEP_PT = 3
"""The padding either side of a column (LaTeX's default is 6 pt)."""


def wrapping(width_in: float) -> str:
    """A left-aligned column that wraps at ``width_in`` inches (``\\usepackage{array}``)."""
    return rf">{{\raggedright\arraybackslash}}p{{{width_in}in}}"


def latex_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    caption: str,
    label: str,
    align: str | None = None,
    escape: bool = True,
    size: str = "footnotesize",
    groups: Sequence[tuple[str, Sequence[Sequence[str]]]] | None = None,
    group_width_in: float | None = None,
) -> str:
    """A booktabs table (``\\usepackage{booktabs,array}``) in font ``size`` with
    :data:`TABCOLSEP_PT` padding; cells escaped unless ``escape`` is False (callers that add their
    own markup escape the text themselves). ``groups``: (title, rows) pairs instead of ``rows``,
    each under a title row across the table (a dataset, say, said once rather than per row);
    ``group_width_in``: the titles wrap at that width instead of widening the table."""
    esc = latex_escape if escape else str
    align = align or "l" + "r" * (len(header) - 1)
    body: list[str] = [" & ".join(esc(c) for c in row) + r" \\" for row in rows]
    for k, (title, members) in enumerate(groups or ()):
        if k:
            body.append(r"\addlinespace")
        spec = f"@{{}}p{{{group_width_in}in}}" if group_width_in else "@{}l"
        body.append(rf"\multicolumn{{{len(header)}}}{{{spec}}}{{\textit{{{latex_escape(title)}}}}} \\")
        body += [" & ".join(esc(c) for c in row) + r" \\" for row in members]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\{size}",
        rf"\setlength{{\tabcolsep}}{{{TABCOLSEP_PT}pt}}",
        rf"\caption{{{latex_escape(caption)}}}",
        rf"\label{{{label}}}",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(esc(h) for h in header) + r" \\",
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def write_csv(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    columns: list[str] = []
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


# --------------------------------------------------------------------------- best marks


def granularity(scorer: ScorerId | None) -> str:
    """The item set a field-level scorer is read on (``@leaf``, ``@top``; "" for the default and for
    a name outside the grammar): scorers on different item sets are not paired."""
    return (scorer.granularity if scorer is not None else None) or ""
