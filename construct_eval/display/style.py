"""How a scorer and a dataset look to a reader: display names, colours, markers, venue sizes.

Every label a figure or table shows a reader goes through :func:`display_name` (scorers: the
short form of :func:`construct_eval.scorer_labels.display_name`, the one source of scorer labels) and
:func:`dataset_label` (runs); a family's words and a new scorer's colour and marker come from
the scorer registry. Colours are the Okabe-Ito palette (colour-blind safe) keyed by what a
score is (the forced rating, its expected rating, P(correct), ...), markers by its role, so a
score looks the same in every figure whichever subset it shows; grey is kept for baselines
that use the labels. Sizes and font sizes follow the venue (NeurIPS, ICML, ICLR through
``tueplots``; ACL from its style file), fonts embedded as TrueType in a serif face matplotlib
ships (DejaVu Serif: these machines have neither Times nor LaTeX). :func:`save_all` writes PDF,
SVG and a 300-dpi PNG, byte-identical for identical inputs.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cycler import cycler
from matplotlib.figure import Figure

from construct_eval import scorer_labels, scorer_registry
from construct_eval.types import ScorerId

OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
"""Okabe & Ito (2008), colour-blind safe; grey is kept for baselines that use labels."""
BASELINE_GREY = "#999999"
OLIVE = "#8C7A00"  # a darkened Okabe-Ito yellow: the yellow itself cannot be seen on white
CONSTRUCT_COLOUR = "#882255"
"""Reserved for CONSTRUCT (the paper's method, and its variant with the generator's samples): no
other score is drawn in it (Tol's wine; the Okabe-Ito pink is the judge's expected rating)."""
JSON_JUDGE_COLOUR = "#332288"
"""The judge asked for a JSON schema of field ratings (one call for every field): its own colour,
apart from the forced rating's blue (Tol's indigo)."""
ISOTONIC_COLOUR = "#77AA22"
"""Isotonic's yellow-green: a hue no score is drawn in (the pinks and purples are the expected
rating's, CONSTRUCT's and the JSON judge's; the olive yellow is TLM's), and apart from Platt's teal."""
CALIBRATOR_STYLES: dict[str, tuple[str, Any, str | None]] = {
    "naive": ("#BBBBBB", ":", None),
    "isotonic": (ISOTONIC_COLOUR, "-", "s"),
    "platt": ("#44AA99", "--", "^"),
    "platt-per-field": ("#117733", (0, (5, 1, 1, 1)), "v"),
    "histogram": ("#EE3377", "-.", "D"),
    "netcal-histogram": ("#EE3377", "-.", "D"),
    "beta": ("#6699CC", (0, (3, 1, 1, 1, 1, 1)), "P"),
    "netcal-beta": ("#6699CC", (0, (3, 1, 1, 1, 1, 1)), "P"),
    "base rate": ("#404040", "-.", None),
}
"""Colour, line style and marker of each reading of a rating, the one palette for calibrators: the
naive reading, each calibrator fitted out of fold, the base rate (a constant prediction). Every
figure that draws a calibrator reads it here (the paper's meaning figure, the package's meaning
and reliability panels, the decision figures' learning curves through :func:`calibrator_style`),
so isotonic is yellow-green and Platt teal wherever they appear. The colours are Paul Tol's (muted
and vibrant schemes, colour-blind safe; isotonic's a yellow-green between his olive and pear) and
none is a score's colour (:func:`series_style`: the Okabe-Ito eight, CONSTRUCT's wine, the JSON
judge's indigo, the checks' brown), so a calibrator's line is never read as a score; the naive
reading and the base rate are greys, references rather than fitted maps."""
_OTHER_CALIBRATORS = ("#661100", "#88CCEE", "#DDCC77")
"""Colours for a calibrator the palette does not name (a registered one): Tol's, in turn."""


def calibrator_style(method: str, k: int = 0) -> tuple[str, Any, str | None]:
    """Colour, line style and marker of calibrator ``method`` (:data:`CALIBRATOR_STYLES`); one the
    palette does not name gets the ``k``-th of a few spare colours, solid, with a circle."""
    key = method.lower() if method.lower() in CALIBRATOR_STYLES else method
    if key in CALIBRATOR_STYLES:
        return CALIBRATOR_STYLES[key]
    return _OTHER_CALIBRATORS[k % len(_OTHER_CALIBRATORS)], "-", "o"


FORMATS = ("pdf", "svg", "png")
PNG_DPI = 300
SERIES_GID = "series:"
"""Prefix of the gid a drawing function gives the artist of each series it draws."""
MAX_SERIES = 6
"""At most this many series (scorers, lines, rows of estimates) in one panel: more go to
another (appendix) figure or to the tables."""

# ACL's style file: \textwidth 455.24411pt, \columnwidth 219.08614pt; text in 11pt
_ACL_WIDTH_IN = {"full": 455.24411 / 72.27, "half": 219.08614 / 72.27}
VENUES = ("neurips", "icml", "iclr", "acl")


def _sid(scorer: str | ScorerId) -> ScorerId | None:
    if isinstance(scorer, ScorerId):
        return scorer
    try:
        return ScorerId.parse(scorer)
    except ValueError:
        return None


def display_name(scorer: str | ScorerId, *, granularity: bool = False) -> str:
    """A scorer's label in a figure: :func:`construct_eval.scorer_labels.display_name`'s short form
    ("judge rating (forced)", "expected rating", "P(correct)", "field prior (uses labels)", ...);
    ``granularity`` adds which fields are the items ("per leaf")."""
    return scorer_labels.display_name(scorer, short=True, granularity=granularity)


def order_label(variant: str) -> str:
    """A judge's prompt order in a figure's words (:func:`construct_eval.scorer_labels.variant_label`'s
    short form): ``sec:o-s-r|fields:original`` -> "output first"."""
    return scorer_labels.variant_label(variant, short=True)


_KEPT_SPACE = "\u00a0"  # textwrap breaks only at ASCII whitespace, so this space holds a phrase together


def wrap(text: str, width: int = 30) -> str:
    """``text`` on lines of at most ``width`` characters, broken between words (not at a hyphen:
    "last-to-first" stays whole) and never inside a parenthesised phrase that fits on a line ("(version 2)", "(no labels)"): a label reads
    "shipping notices / (version 2)", not "shipping notices (version / 2)". Existing line
    breaks stay."""

    def keep(phrase: re.Match[str]) -> str:
        return phrase[0].replace(" ", _KEPT_SPACE) if len(phrase[0]) <= width else phrase[0]

    lines = (
        textwrap.fill(re.sub(r"\([^()\n]*\)", keep, line), width, break_long_words=False, break_on_hyphens=False)
        for line in text.split("\n")
    )
    return "\n".join(lines).replace(_KEPT_SPACE, " ")


def wrap_even(text: str, width: int = 30) -> str:
    """``text`` wrapped as :func:`wrap` does, each line on as few lines as ``width`` allows but
    with the lines as even as they can be: a title reads "Qwen2.5-Coder-1.5B generates and scores /
    for every method;", not "... scores for every / method;" with one word left on its own line."""
    out = []
    for line in text.split("\n"):
        count = wrap(line, width).count("\n") + 1
        narrowest = width
        while narrowest > 1 and wrap(line, narrowest - 1).count("\n") + 1 == count:
            narrowest -= 1
        out.append(wrap(line, narrowest))
    return "\n".join(out)


def keep_together(phrase: str) -> str:
    """``phrase`` held on one line by :func:`wrap` (its spaces kept until the wrapped text is
    joined): a value and its share, "10 for 90% of 200 outputs", are not split across lines."""
    return phrase.replace(" ", _KEPT_SPACE)


def dataset_label(run_name: str) -> tuple[str, str]:
    """A run's name as a reader reads it: (dataset, how its errors arose and its size), e.g.
    ``financial_ner-sample600-controlled30`` -> ("financial NER", "planted errors, 600 docs");
    ``financial_ner-sample200`` -> ("financial NER", "generator's errors, 200 docs")."""
    base, *rest = run_name.split("-")
    if base == "natural" and rest:
        return _natural_label(rest)
    name = _DATASET_WORDS.get(base, base.replace("_", " "))
    size = next((m.group(1) for p in rest if (m := re.fullmatch(r"sample(\d+)", p))), None)
    match = re.fullmatch(r"([a-z_]+?)(\d+)", base)
    if match and base not in _DATASET_WORDS:  # "synthetic40": the size is part of the name
        name, size = match.group(1).replace("_", " "), match.group(2)
    if any(p.startswith("nearmiss") for p in rest):  # inject with near-miss kinds (issue 34)
        how = "planted near misses"
    elif any(p.startswith("controlled") for p in rest):
        how = "planted errors"
    else:
        how = "generator's errors"
    others = [p for p in rest if not p.startswith(("controlled", "sample", "nearmiss"))]
    how += "".join(f", {p}" for p in others)
    return name, how + (f", {size} docs" if size else "")


def paper_dataset_label(run_name: str) -> tuple[str, str]:
    """:func:`dataset_label` as the paper's figures and captions say it: without a synthetic
    kind's version ("synthetic shipping notices", not "... (version 2)"), which is project
    history (the paper set leaves the earlier version out)."""
    name, how = dataset_label(run_name)
    return re.sub(r" \(version \d+\)", "", name), how


_DATASET_WORDS = {
    "financial_ner": "financial NER",
    "insurance_claims": "insurance claims",
    "pii": "PII",
    "data_table_rebuild": "data tables (offline rebuild)",
}
_MODEL_PREFIXES = ("qwen", "smollm")


_MAKERS_SPELLING = {"smollm2": "SmolLM2"}
"""Model families whose makers capitalise them otherwise than the first letter."""


def _model_words(parts: list[str]) -> str:
    """``qwen2.5-coder-1.5b`` as its makers write it: Qwen2.5-Coder-1.5B (a size in billions or
    millions upper case: SmolLM2-135M)."""
    return "-".join(
        _MAKERS_SPELLING.get(p) or re.sub(r"(\d)([bm])$", lambda m: m[1] + m[2].upper(), p[:1].upper() + p[1:])
        for p in parts
    )


def model_label(name: str) -> str:
    """A model id as its makers write it.

    >>> model_label("qwen2.5-coder-1.5b"), model_label("smollm2-135m")
    ('Qwen2.5-Coder-1.5B', 'SmolLM2-135M')
    """
    return _model_words(name.split("-"))


def _natural_label(parts: list[str]) -> tuple[str, str]:
    """A natural-error run (``natural_study.sh``): ``natural-[pilot-]<dataset>[-<kinds>]-<model>-<prompt>``,
    e.g. ``natural-synthetic-shipping_notice-qwen2.5-coder-1.5b-package`` -> ("synthetic shipping notices",
    "generator's errors, Qwen2.5-Coder-1.5B, package prompt")."""
    parts = parts[1:] if parts[0] == "pilot" else parts
    start = next((i for i, p in enumerate(parts) if p.startswith(_MODEL_PREFIXES)), None)
    if start is None or start == 0 or len(parts) - start < 2:  # not the study's naming: say it as it is
        return " ".join(parts).replace("_", " "), "generator's errors"
    dataset, kinds, model, prompt = parts[0], parts[1:start], parts[start:-1], parts[-1]
    name = _DATASET_WORDS.get(dataset, dataset.replace("_", " "))
    if kinds:
        name += " " + " and ".join(_kind_words(k) for k in "+".join(kinds).split("+"))
    return name, f"generator's errors, {_model_words(model)}, {prompt} prompt"


def _kind_words(kind: str) -> str:
    """A synthetic document kind in the plural: ``shipping_notice`` -> "shipping notices",
    ``shipping_notice_v2`` -> "shipping notices (version 2)"."""
    base, version = (m.group(1), m.group(2)) if (m := re.fullmatch(r"(.+)_v(\d+)", kind)) else (kind, None)
    return base.replace("_", " ") + "s" + (f" (version {version})" if version else "")


PLANTED_LABELS = {
    "digit_slip": "a digit slipped",
    "format_change": "format changed",
    "span_cut": "span cut short",
    "span_extended": "span runs on",
    "neighbour_type": "entity of a neighbouring type",
    "enum_swap": "another enum value",
    "other_value": "value from elsewhere",
    "invented_value": "value invented (truth empty)",
    "item_duplicated": "list item repeated",
    "item_dropped": "list item dropped",
}
"""The planted error kinds (``inject``, ``near_miss``) as a reader names them, in the order the
figure draws them: the near misses (a good extractor's errors) first, then the coarser ones."""
NEAR_MISSES = ("digit_slip", "format_change", "span_cut", "span_extended", "neighbour_type")


def planted_row_label(planted: str, fields: str) -> str:
    """A row of the per-kind figure and table: the kind as a reader names it, `` *`` for a near
    miss, and where the kind happens in both output kinds (a dropped list item leaves the list
    filled or empty) which one: ``fields`` is ``value`` or ``null or empty``."""
    label = PLANTED_LABELS.get(planted, planted) + (" *" if planted in NEAR_MISSES else "")
    if fields == "null or empty":
        return label + " (field left empty)"
    return label + (" (list still filled)" if planted == "item_dropped" else "")


"""The kinds counted as near misses (``construct_eval.data.near_miss.NEAR_MISS_KINDS``)."""


@dataclass(frozen=True)
class SeriesStyle:
    colour: str
    marker: str
    linestyle: str = "-"


def series_style(scorer: str | ScorerId) -> SeriesStyle:
    """Colour, marker and line style of a scorer, fixed by what it is (not by its position)."""
    sid = _sid(scorer)
    if sid is None:
        return SeriesStyle(OKABE_ITO[3], "o")
    if sid.is_combination:
        return SeriesStyle(BASELINE_GREY if sid.uses_labels else OKABE_ITO[7], "h", "-.")
    if sid.uses_labels:
        return SeriesStyle(BASELINE_GREY, "s", ":")
    if sid.is_judge:
        order, free = scorer_labels.short_order(sid.variant)
        expected = sid.value == "expected"
        colour = OKABE_ITO[6] if expected else OKABE_ITO[1] if free else OKABE_ITO[4]
        if not expected and "ask:json" in (sid.variant or ""):
            colour = JSON_JUDGE_COLOUR
        if sid.aggregate:
            return SeriesStyle(colour, "^" if expected else "v", "--")
        if order:
            return SeriesStyle(colour, {"fields reversed": ">", "output first": "<"}.get(order, "P"), ":")
        return SeriesStyle(colour, ("d" if free else "D") if expected else ("s" if free else "o"))
    by_family = {
        "p-correct": SeriesStyle(OKABE_ITO[0], "^"),
        "token_logprob": SeriesStyle(OKABE_ITO[5], "v"),
        "consistency": SeriesStyle(OKABE_ITO[2], "P"),
        "reflection": SeriesStyle(OKABE_ITO[7], _declared_marker("reflection")),  # fillable: hollow when weak
        "tlm": SeriesStyle(OLIVE, _declared_marker("tlm")),
        "construct": SeriesStyle(CONSTRUCT_COLOUR, _declared_marker("construct")),
        "construct-gen": SeriesStyle(CONSTRUCT_COLOUR, _declared_marker("construct-gen")),
    }
    spec = scorer_registry.spec_for(sid.family)
    declared = SeriesStyle(spec.colour, spec.marker or "o") if spec is not None else SeriesStyle(OKABE_ITO[3], "o")
    base = by_family.get(sid.family, declared)
    if sid.family == "plausibility":  # its own shape: beside the forced rating's circles it differs by more than hue
        base = SeriesStyle(declared.colour, "X")
    return SeriesStyle(base.colour, base.marker, "--" if sid.aggregate else "-")


def _declared_marker(family: str, default: str = "o") -> str:
    """The marker the scorer registry declares for ``family``."""
    spec = scorer_registry.spec_for(family)
    return (spec.marker if spec is not None else None) or default


def colour(scorer: str | ScorerId) -> str:
    return series_style(scorer).colour


def marker(scorer: str | ScorerId) -> str:
    return series_style(scorer).marker


MIN_TEXT_PT = 6.0
"""The smallest text a paper figure prints, in points."""


def venue_style(venue: str = "neurips", column: str = "full", *, nrows: int = 1, ncols: int = 1) -> dict[str, Any]:
    """rcParams for a venue's size and font sizes, with embeddable fonts that exist here."""
    if venue not in VENUES:
        raise ValueError(f"venue must be one of {VENUES}, not {venue!r}")
    if column not in ("full", "half"):
        raise ValueError("column must be 'full' (text width) or 'half' (one column of two)")
    from tueplots import bundles, fontsizes

    if venue == "icml":
        style = dict(bundles.icml2024(column=column, nrows=nrows, ncols=ncols, usetex=False))
    elif venue in ("neurips", "iclr"):
        bundle = bundles.neurips2024 if venue == "neurips" else bundles.iclr2024
        style = dict(bundle(usetex=False, rel_width=1.0 if column == "full" else 0.5, nrows=nrows, ncols=ncols))
    else:  # ACL: tueplots has no bundle; widths from the style file, 11pt text (captions 10pt)
        width = _ACL_WIDTH_IN[column]
        style = {"figure.figsize": (width, width / ncols * nrows * 0.618), "figure.constrained_layout.use": True}
        style.update(fontsizes.icml2024(default_smaller=-1))
    # the smallest text a figure writes is "x-small" (0.694 of font.size): at a one-column width
    # tueplots' 8 pt makes it 5.55 pt, below the 6 pt a printed figure needs; axes labels, titles,
    # ticks and legends keep the venue's sizes (set explicitly above)
    style["font.size"] = max(float(style.get("font.size", 10)), MIN_TEXT_PT / 0.694)
    style.update(
        {
            "font.family": "serif",
            "font.serif": ["DejaVu Serif"],
            "mathtext.fontset": "dejavuserif",
            "text.usetex": False,
            "pdf.fonttype": 42,  # TrueType, not Type 3
            "ps.fonttype": 42,
            "svg.fonttype": "none",
            "svg.hashsalt": "construct-eval",  # stable element ids: identical inputs, identical SVG
            "savefig.dpi": PNG_DPI,
            "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
        }
    )
    return style


_NO_DATES = {"pdf": {"CreationDate": None}, "svg": {"Date": None}, "png": {}}


def save_all(fig: Figure, stem: Path, style: Mapping[str, Any], formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """``stem``.pdf, .svg and a 300-dpi .png, saved under ``style`` (font embedding is read at
    save time), without creation dates so that the same inputs give the same bytes."""
    import matplotlib

    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    with matplotlib.rc_context({**style, "svg.hashsalt": "construct-eval"}):
        for fmt in formats:
            path = stem.with_suffix(f".{fmt}")
            fig.savefig(path, format=fmt, dpi=PNG_DPI if fmt == "png" else None, metadata=_NO_DATES[fmt])
            out.append(path)
    return out
