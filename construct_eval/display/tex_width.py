"""How wide a LaTeX table the paper set writes will be when typeset, without TeX: each column's
widest cell measured with Computer Modern's metrics (matplotlib ships ``cmr10``), wrapping
(``p{}``) columns at their given width, plus the column padding. An estimate good to a few
percent (kerning and bold are approximated), enough to tell a table that fits the text width
from one that runs a column or two over it."""

from __future__ import annotations

import re
from functools import lru_cache

BOLD_FACTOR = 1.1
"""Computer Modern bold against roman, about."""
DESIGN_SIZE_FACTOR = 1.0625
"""cmr8 (footnotesize in a 10 pt class) is wider than cmr10 scaled to 8 pt: a digit 4.25 pt, not 4.0."""
_UNESCAPE = {r"\%": "%", r"\_": "_", r"\&": "&", r"\#": "#", r"\$": "$", r"\textbar{}": "|", "--": "-"}
_SIZES_PT = {"tiny": 5.0, "scriptsize": 7.0, "footnotesize": 8.0, "small": 9.0, "normalsize": 10.0}


@lru_cache(maxsize=4096)
def text_width_in(text: str, size_pt: float = 8.0) -> float:
    """The width of plain ``text`` in Computer Modern roman at ``size_pt``, in inches."""
    import os

    import matplotlib
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    if not text.strip():
        return 0.0
    font = FontProperties(fname=os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "cmr10.ttf"), size=size_pt)
    scale = DESIGN_SIZE_FACTOR if size_pt < 10 else 1.0
    return scale * float(TextPath((0, 0), text.replace(" ", "\u00a0"), prop=font).get_extents().width) / 72


def cell_width_in(cell: str, size_pt: float = 8.0) -> float:
    """A cell's width: the widest line of a nested tabular, bold widened, markup dropped."""
    cell = cell.strip()
    nested = re.fullmatch(
        r"\\begin\{tabular\}(\[[a-z]\])?\{(?:[^{}]|\{[^{}]*\})*\}(.*)\\end\{tabular\}", cell, flags=re.S
    )
    if nested:
        return max(cell_width_in(line, size_pt) for line in nested.group(2).split(r" \\ "))
    factor = BOLD_FACTOR if r"\textbf{" in cell else 1.0
    plain = re.sub(r"\\textbf\{(.*)\}", r"\1", cell)
    plain = plain.replace(r"$^\ddagger$", "\u2021").replace(r"$^\dagger$", "\u2020")
    for markup, char in _UNESCAPE.items():
        plain = plain.replace(markup, char)
    return factor * text_width_in(plain, size_pt)


def _columns(spec: str) -> list[float | None]:
    """Each column of a tabular spec: its fixed width (``p{..in}``) or None (sized by its cells)."""
    out: list[float | None] = []
    for fixed, _letter in re.findall(r">\{[^}]*\}p\{([\d.]+)in\}|([lrc])", spec):
        out.append(float(fixed) if fixed else None)
    return out


def table_width_in(tex: str) -> float:
    """The typeset width (inches) of the first tabular in ``tex``, padding included."""
    size = next((pt for name, pt in _SIZES_PT.items() if f"\\{name}\n" in tex), 10.0)
    pad = re.search(r"\\setlength\{\\tabcolsep\}\{([\d.]+)pt\}", tex)
    tabcolsep_in = (float(pad.group(1)) if pad else 6.0) / 72
    spec = re.search(r"^\\begin\{tabular\}\{(.*)\}$", tex, flags=re.M)
    if spec is None:
        raise ValueError("no tabular in the table")
    columns = _columns(spec.group(1))
    widths = [w or 0.0 for w in columns]
    body = tex.split(r"\toprule", 1)[1].split(r"\bottomrule", 1)[0]
    spanning = 0.0  # the widest row across the table (a group's title): the columns must hold it
    for line in body.splitlines():
        line = line.strip().removesuffix(r"\\").strip()
        title = re.fullmatch(r"\\multicolumn\{\d+\}\{(?:[^{}]|\{[^{}]*\})*\}\{(?:\\textit\{)?(.*?)\}?\}", line)
        if title:
            wraps = re.search(r"\{@\{\}p\{([\d.]+)in\}\}", line)  # a title that wraps at a given width
            spanning = max(spanning, float(wraps.group(1)) if wraps else cell_width_in(title.group(1), size))
            continue
        if not line or line.startswith(("\\midrule", "\\addlinespace")):
            continue
        for k, cell in enumerate(re.split(r"(?<!\\)&", line)[: len(columns)]):
            if columns[k] is None:
                widths[k] = max(widths[k], cell_width_in(cell, size))
    return max(sum(widths) + 2 * tabcolsep_in * len(columns), spanning)
