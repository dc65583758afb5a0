"""The paper's figure set from recorded runs (``construct-eval figures``): one message a figure.

Main figures, for the questions the package exists for (datasets with at least
:data:`~construct_eval.paper.figure_data.MIN_CLASS` wrong and right items at the level):

- ``detect_document``, ``detect_field``: how well each score finds wrong documents and wrong
  fields, against the field prior (uses the labels) and the generator's token log-probs;
- ``detect_field_by_kind``: the same for fields, read within the filled and within the empty
  fields (a pooled field AUROC mixes the two);
- ``detect_planted_kind``: which planted errors each score finds, per planted error kind (the
  near misses a good extractor makes first);
- ``meaning_ratings``: what each value of the judge's written rating means;
- ``order_shift``: does the prompt order sway the judge;
- ``review_document``, ``review_field``: what a review budget buys.

Appendix figures (``appx_*``) hold the rest: the datasets too small to mean anything (marked),
the other prompt orders, the combinations, other forms of a score, AUPRC, reliability diagrams.
No panel draws more than :data:`~construct_eval.display.style.MAX_SERIES` series: datasets share
a figure while their scores together fit (planted errors first,
:func:`~construct_eval.paper.figure_data.figure_pieces`), so a dataset's scores stay side by
side; only a dataset with more scores continues in a numbered figure. Every figure is saved as PDF, SVG and 300-dpi PNG
(byte-identical for identical inputs) with its numbers as LaTeX and CSV tables; ``figures.md``
says what each file shows and ``manifest.json`` maps each short file name to its message, its
datasets, the scores it draws (internal name -> label shown) and the run files (and hashes) it
was made from. :func:`build_figures` makes the figures without writing anything (the
readability tests check each).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from construct_eval.display.style import MAX_SERIES, dataset_label, venue_style
from construct_eval.paper import figure_data as fd
from construct_eval.paper import paper_plots as pp

MAX_NAME = 40
"""The longest file stem the set writes (the manifest maps each to what it shows)."""
MAX_PANELS = 9
"""Panels of a meaning or reliability figure before it continues in a numbered figure."""


@dataclass
class PaperFigure:
    """A figure of the set with what the manifest says about it."""

    name: str
    figure: Figure
    style: dict[str, Any]
    what: str
    inputs: list[Path]
    appendix: bool = False
    datasets: list[str] = field(default_factory=list)
    scorers: dict[str, str] = field(default_factory=dict)  # internal name -> label shown
    rows: list[tuple[str, str, str]] = field(default_factory=list)  # (dataset, level, scorer) drawn


def _names(base: str, n: int) -> list[str]:
    names = [base if k == 0 else f"{base}_{k + 1}" for k in range(n)]
    for name in names:
        if len(name) > MAX_NAME:
            raise ValueError(f"figure name {name!r} is longer than {MAX_NAME} characters")
    return names


def _scorers(rows: Iterable[Any]) -> dict[str, str]:
    """The manifest's scorer map: internal name -> the label its row or panel carries in the figure
    (:func:`paper_plots.row_labels`: one score under two internal names on two datasets is one row)."""
    return {str(k): v for k, v in pp.row_labels(list(rows)).items()}


def _split_by_power(estimates: Sequence[fd.Estimate]) -> tuple[list[str], list[str]]:
    """(datasets with a powered label-free row, the others), in the estimates' order."""
    datasets = list(dict.fromkeys(e.dataset for e in estimates))
    powered = [d for d in datasets if fd.powered(e for e in estimates if e.dataset == d)]
    return powered, [d for d in datasets if d not in powered]


def _row_key(e: fd.Estimate) -> tuple[str, str, str]:
    return (e.dataset, e.level, e.scorer)


def _detection_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    out = []
    inputs = [r / "metrics" / "detection.csv" for r in run_dirs]
    for metric in ("auroc", "auprc"):
        estimates = [e for r in run_dirs for e in fd.read_detection(r, metric)]
        for level in ("document", "field"):
            chosen = [e for e in estimates if e.level == level]
            if not chosen:
                continue
            every = list(dict.fromkeys(e.dataset for e in chosen))
            gran = {d: fd.panel_granularity(e for e in chosen if e.dataset == d) for d in every}
            group_of = {(e.dataset, e.scorer): fd.group(e.scorer, gran[e.dataset]) for e in chosen}
            unit = "documents" if level == "document" else "fields"
            # (name, group, which rows, message, appendix, panels marked "too few to judge")
            plans: list[tuple[str, str, Any, str, bool, bool]] = []
            if metric == "auroc":
                plans.append((f"detect_{level}", "main", lambda e: e.powered, f"how well each score finds wrong {unit}",
                              False, False))  # fmt: skip
                plans.append((f"appx_detect_{level}_small", "main", lambda e: not e.powered,
                              f"as detect_{level}, the rows too small to mean anything", True, True))  # fmt: skip
                for g in ("orders", "combinations", "other"):
                    what = {"orders": "under other prompt orders (default order for reference)",
                            "combinations": "combined scores", "other": "other forms of each score"}[g]  # fmt: skip
                    plans.append((f"appx_{g}_{level}", g, lambda e: True, f"AUROC for wrong {unit}: {what}", True,
                                  False))  # fmt: skip
            else:
                plans.append((f"appx_auprc_{level}", "main", lambda e: e.powered, f"AUPRC for wrong {unit}, main scores",
                              True, False))  # fmt: skip
            for base, g, keep, what, appendix, marked in plans:
                rows = [e for e in chosen if keep(e) and group_of[(e.dataset, e.scorer)] == g]
                if not rows:
                    continue
                scorers = sorted(dict.fromkeys(e.scorer for e in rows), key=fd.order_key)
                if g == "orders":  # the default order beside the others, as the reference
                    ref = [e for e in chosen if e.dataset in {r.dataset for r in rows}
                           and fd.role(e.scorer) in ("judge", "expected") and group_of[(e.dataset, e.scorer)] == "main"]  # fmt: skip
                    rows, scorers = ref + rows, [*sorted({e.scorer for e in ref}, key=fd.order_key), *scorers]
                datasets = [d for d in every if any(e.dataset == d for e in rows)]
                present = {d: {e.scorer for e in rows if e.dataset == d} for d in datasets}
                pieces = []
                for sets, part in fd.figure_pieces(datasets, present, scorers, _how(datasets), pp.row_labels(rows)):
                    mine = [e for e in rows if e.scorer in part and e.dataset in sets]
                    for these in _fit_height(mine, sets, venue, column):
                        picked = [e for e in mine if e.dataset in these]
                        picked.sort(key=lambda e: (these.index(e.dataset), part.index(e.scorer)))
                        pieces.append((these, picked))
                dropped = [e for e in chosen if not keep(e) and group_of[(e.dataset, e.scorer)] == g]
                for name, (sets, mine) in zip(_names(base, len(pieces)), pieces, strict=True):
                    style = venue_style(venue, column, ncols=min(len(sets), pp.PANELS_PER_ROW + 1))
                    # a score left out of this figure says where it is: too few here (in the appendix, or
                    # nowhere for AUPRC), or powered and so in the main figure
                    moved = {d: {pp.display_name(e.scorer) for e in dropped if e.dataset == d} for d in sets}
                    where = ("in the main figure" if marked else "too few to judge" if appendix
                             else "too few: appendix")  # fmt: skip
                    fig = pp.forest_figure(mine, metric=metric, style=style, granularity=gran,
                                           small=sets if marked else [], moved=moved, too_few=where)  # fmt: skip
                    out.append(PaperFigure(name, fig, style, what, inputs, appendix, sets, _scorers(mine),
                                           [_row_key(e) for e in mine]))  # fmt: skip
    return out


def _by_kind_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    """``detect_field_by_kind``: field AUROC read within the filled and within the empty fields of
    each dataset (a pooled field AUROC mixes the two; ``output_kinds``), the main scores only. A
    row needs the power of a main row within its kind; the others say "too few to judge"."""
    estimates = [e for r in run_dirs for e in fd.read_by_kind(r)]
    if not estimates:
        return []
    pooled = [e for r in run_dirs for e in fd.read_detection(r) if e.level == "field"]
    every = list(dict.fromkeys(e.dataset for e in estimates))
    gran = {d: fd.panel_granularity(e for e in pooled if e.dataset == d) for d in every}
    chosen = [e for e in estimates if fd.group(e.scorer, gran[e.dataset]) == "main"]
    datasets = [d for d in every if fd.powered(e for e in chosen if e.dataset == d)]
    rows = [e for e in chosen if e.dataset in datasets and e.powered]
    if not rows:
        return []
    order = list(fd.KIND_LABELS)
    scorers = sorted(dict.fromkeys(e.scorer for e in rows), key=fd.order_key)
    inputs = [r / "metrics" / "detection_by_output_kind.csv" for r in run_dirs
              if (r / "metrics" / "detection_by_output_kind.csv").exists()]  # fmt: skip
    per_dataset = {d: {e.scorer for e in rows if e.dataset == d} for d in datasets}  # the rows its panels share
    pieces = []
    for sets, part in fd.figure_pieces(datasets, per_dataset, scorers, _how(datasets), pp.row_labels(rows)):
        mine = [e for e in rows if e.scorer in part and e.dataset in sets]
        for these in _fit_height(mine, sets, venue, column):
            picked = [e for e in mine if e.dataset in these]
            picked.sort(key=lambda e: (these.index(e.dataset), order.index(e.kind), part.index(e.scorer)))
            pieces.append((these, picked))
    out = []
    what = "how well each score finds wrong fields within the filled and within the empty fields"
    for name, (sets, mine) in zip(_names("detect_field_by_kind", len(pieces)), pieces, strict=True):
        style = venue_style(venue, column, ncols=2)
        drawn = {e.panel for e in mine}
        weak = {e.panel: set() for e in mine}
        for e in chosen:
            if e.panel in drawn and not e.powered and e.scorer in {m.scorer for m in mine}:
                weak[e.panel].add(pp.display_name(e.scorer))
        fig = pp.forest_figure(mine, style=style, granularity=gran, moved=weak, too_few="too few to judge")
        out.append(PaperFigure(name, fig, style, what + _left_out(chosen, sets, drawn), inputs, False, sets, _scorers(mine),
                               [(e.dataset, f"field:{e.kind}", e.scorer) for e in mine]))  # fmt: skip
    return out


def _left_out(chosen: Sequence[fd.Estimate], datasets: Sequence[str], drawn: set[Any]) -> str:
    """What a by-kind figure leaves out: its datasets' output kinds with no row powered enough to
    draw, each with its wrong and all items, so that a missing panel is said, not silent."""
    gone = {}
    for e in chosen:
        if e.dataset in datasets and e.panel not in drawn:
            gone[(e.dataset, e.kind)] = e
    if not gone:
        return ""
    said = [
        f"{pp.dataset_label(d)[0]}, {fd.KIND_LABELS[k]} ({e.positives} wrong of {e.n})"
        for (d, k), e in sorted(gone.items(), key=lambda kv: (datasets.index(kv[0][0]), kv[0][1]))
    ]
    return "; left out, too few to judge: " + "; ".join(said)


def planted_estimates(run_dirs: Sequence[Path]) -> list[fd.Estimate]:
    """The rows per planted kind the set draws and tabulates: each dataset's main field scores at
    its panel's granularity (:func:`~construct_eval.paper.figure_data.read_by_planted_kind`), on
    the datasets with at least one powered label-free row."""
    estimates = [e for r in run_dirs for e in fd.read_by_planted_kind(r)]
    pooled = [e for r in run_dirs for e in fd.read_detection(r) if e.level == "field"]
    gran = {d: fd.panel_granularity(e for e in pooled if e.dataset == d) for d in {e.dataset for e in estimates}}
    chosen = [e for e in estimates if fd.group(e.scorer, gran[e.dataset]) == "main"]
    powered = {e.dataset for e in chosen if e.powered and not e.uses_labels}  # a dataset with a powered label-free row
    return [e for e in chosen if e.dataset in powered]


def _planted_kind_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    """``detect_planted_kind``: which planted errors each main field score finds, per kind (the
    near misses first), on every dataset with planted errors and a powered kind. At most
    :data:`~construct_eval.display.style.MAX_SERIES` scores and one line of panels a figure."""
    from construct_eval.paper import planted_plots

    chosen = planted_estimates(run_dirs)
    datasets = list(dict.fromkeys(e.dataset for e in chosen))
    planted_first = sorted(datasets, key=lambda d: not dataset_label(d)[1].startswith("planted near"))
    rows = [e for e in chosen if e.dataset in datasets]
    if not rows:
        return []
    scorers = sorted(dict.fromkeys(e.scorer for e in rows), key=fd.order_key)
    present = {d: {e.scorer for e in rows if e.dataset == d} for d in datasets}
    inputs = [r / "metrics" / "detection_by_planted_kind_within_output_kind.csv" for r in run_dirs
              if (r / "metrics" / "detection_by_planted_kind_within_output_kind.csv").exists()]  # fmt: skip
    import matplotlib

    with matplotlib.rc_context(venue_style(venue, column)):
        per_figure = pp.per_row()  # one line of panels a figure: the kinds make each panel tall
    pieces = []
    for members, part in fd.figure_pieces(datasets, present, scorers, _how(datasets), pp.row_labels(rows)):
        sets = [d for d in planted_first if d in members]
        for k in range(0, len(sets), per_figure):
            these = sets[k : k + per_figure]
            pieces.append((these, [e for e in rows if e.scorer in part and e.dataset in these]))
    out = []
    what = ("which planted errors each score finds: AUROC of each planted kind's wrong fields against the correct "
            "fields of the same output kind (filled ones against filled, fields left empty against empty; near misses *)")  # fmt: skip
    for name, (sets, mine) in zip(_names("detect_planted_kind", len(pieces)), pieces, strict=True):
        style = venue_style(venue, column, ncols=min(len(sets), per_figure))
        fig = planted_plots.planted_kind_figure(mine, style=style)
        drawn = list(dict.fromkeys((e.dataset, f"planted:{e.kind}:{e.planted}", e.scorer) for e in mine if e.powered))
        out.append(PaperFigure(name, fig, style, what, inputs, False, sets, _scorers(mine), drawn))
    return out


def _how(datasets: Sequence[str]) -> dict[str, str]:
    """How each dataset's errors arose, as its label says ("planted errors", "generator's errors")."""
    return {d: dataset_label(d)[1] for d in datasets}


def _fit_height(
    estimates: Sequence[fd.Estimate], datasets: list[str], venue: str, column: str,
    height: Callable[[list[str]], float] | None = None,
) -> list[list[str]]:  # fmt: skip
    """``datasets`` in groups, each drawn no taller than :data:`paper_plots.MAX_HEIGHT_IN`: one
    group if it fits, else planted errors (the main study's kind first, then planted near misses)
    apart from generated ones, each split further if needed. ``height``: a group's figure height
    in the venue's style (default: a forest figure of ``estimates``)."""
    import matplotlib

    def forest(group: list[str]) -> float:
        return pp.forest_height([e for e in estimates if e.dataset in group])

    def tall(group: list[str]) -> bool:
        style = venue_style(venue, column, ncols=min(len(group), pp.PANELS_PER_ROW + 1))
        with matplotlib.rc_context(style):
            return (height or forest)(group) > pp.MAX_HEIGHT_IN

    if not tall(datasets):
        return [datasets]
    kinds: dict[str, list[str]] = {}
    for d in datasets:
        kinds.setdefault(dataset_label(d)[1].split(",")[0], []).append(d)

    def rank(d: str) -> int:
        return fd.error_rank(dataset_label(d)[1])

    groups: list[list[str]] = []
    for members in sorted(kinds.values(), key=lambda m: (rank(m[0]), datasets.index(m[0]))):
        groups.append([])
        for d in members:
            if groups[-1] and tall([*groups[-1], d]):
                groups.append([])
            groups[-1].append(d)
    return groups


MIN_HEADROOM = 0.1
"""A review panel is drawn only if a perfect score could find this much more of the wrong items
than random order at the largest budget: where nearly every item is wrong, every curve lies on
the random line whatever the score (190 of 200 wrong: at most 0.316 against 0.30 at 30%)."""


def _review_headroom(estimates: Sequence[fd.Estimate], dataset: str, budget: int) -> float:
    """Recall a perfect score reaches at ``budget`` % reviewed minus random order's, on the
    dataset's largest row: min(1, b / share wrong) - b.

    The largest row, not the panel's title row (:func:`paper_plots.title_row`): whether a panel
    is worth drawing is a property of the dataset's items, and the largest row holds the most of
    them; the title row only decides which count the panel's title shows."""
    first = max((e for e in estimates if e.dataset == dataset), key=lambda e: (e.n, e.positives))
    _, found = pp.perfect_review(first.n, first.positives, budget)
    return found[-1] - budget / 100


def _review_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    out = []
    inputs = [r / "metrics" / "detection.csv" for r in run_dirs]
    for level in ("document", "field"):
        rows = fd.review_rows(run_dirs, level)
        estimates = [e for r in run_dirs for e in fd.read_detection(r) if e.level == level]
        if not rows or not estimates:
            continue
        powered, _ = _split_by_power(estimates)
        budgets = sorted({r["budget"] for r in rows})
        powered = [d for d in powered if _review_headroom(estimates, d, budgets[-1]) >= MIN_HEADROOM]
        gran = {d: fd.panel_granularity(e for e in estimates if e.dataset == d) for d in powered}
        ok = {(e.dataset, e.scorer) for e in estimates if e.powered}
        chosen = [r for r in rows if r["dataset"] in powered and (r["dataset"], r["scorer"]) in ok
                  and fd.group(r["scorer"], gran[r["dataset"]]) == "main"]  # fmt: skip
        scorers = sorted(dict.fromkeys(r["scorer"] for r in chosen), key=fd.order_key)
        present = {d: {r["scorer"] for r in chosen if r["dataset"] == d} for d in powered}
        unit = "documents" if level == "document" else "fields"
        pieces: list[tuple[list[str], list[dict[str, Any]]]] = []  # (datasets, rows) of each figure
        for sets, part in fd.figure_pieces(powered, present, scorers, _how(powered), pp.row_labels(chosen)):
            mine = [r for r in chosen if r["scorer"] in part and r["dataset"] in sets]
            if not mine:
                continue

            def height(group: list[str], mine: list[dict[str, Any]] = mine) -> float:
                return pp.review_height([r for r in mine if r["dataset"] in group])

            for these in _fit_height(estimates, sets, venue, column, height):  # no taller than a page allows
                pieces.append((these, [r for r in mine if r["dataset"] in these]))
        for name, (sets, mine) in zip(_names(f"review_{level}", len(pieces)), pieces, strict=True):
            style = venue_style(venue, column, ncols=min(len(sets), pp.PANELS_PER_ROW + 1))
            fig = pp.review_figure(mine, level=level, style=style, granularity=gran)
            what = f"what a review budget buys: wrong {unit} found when the lowest-scored are reviewed first"
            drawn = list(dict.fromkeys((r["dataset"], level, r["scorer"]) for r in mine))
            out.append(PaperFigure(name, fig, style, what, inputs, False, sets, _scorers(mine), drawn))
    return out


def _most_panels(height: Callable[[int], float], venue: str, column: str) -> int:
    """The most panels (at most :data:`MAX_PANELS`) a grid figure holds at the venue's width
    without growing taller than :data:`paper_plots.MAX_HEIGHT_IN`; ``height``: its height for so
    many panels in the style context."""
    import matplotlib

    with matplotlib.rc_context(venue_style(venue, column, ncols=pp.PANELS_PER_ROW + 1)):
        return max(k for k in range(1, MAX_PANELS + 1) if k == 1 or height(k) <= pp.MAX_HEIGHT_IN)


def _meaning_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    tables = [t for r in run_dirs for t in fd.value_tables(r)]
    if not tables:
        return []
    estimates = {_row_key(e): e for r in run_dirs for e in fd.read_detection(r)}
    power = {t.path: bool((e := estimates.get((t.dataset, t.level, t.scorer))) and e.powered) for t in tables}
    main = [t for t in tables if power[t.path] and fd.group(t.scorer) == "main"]
    rest = [t for t in tables if t not in main]
    small = [t.path for t in tables if not power[t.path]]
    out = []
    for base, chosen, appendix, what in (
        ("meaning_ratings", main, False, "what each value of the judge's written rating means"),
        ("appx_meaning", rest, True, "what each rating value means: other orders, field minima, small datasets"),
    ):
        most = _most_panels(pp.meaning_height, venue, column)
        parts = [chosen[i : i + most] for i in range(0, len(chosen), most)]
        for name, part in zip(_names(base, len(parts)), parts, strict=True):
            style = venue_style(venue, column, ncols=min(len(part), pp.PANELS_PER_ROW + 1))
            fig = pp.meaning_figure(part, style=style, small=small)
            sets = list(dict.fromkeys(t.dataset for t in part))
            out.append(PaperFigure(name, fig, style, what, [t.path for t in part], appendix, sets,
                                   _scorers(part), [(t.dataset, t.level, t.scorer) for t in part]))  # fmt: skip
    return out


def _order_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    by_value, inputs = {}, []
    for value in ("rating", "expected_rating"):
        rows, paths = fd.bias_rows(run_dirs, value)
        by_value[value], inputs = rows, inputs + paths
    runs = list(dict.fromkeys(r["run"] for rows in by_value.values() for r in rows))
    if not runs:
        return []
    estimates = [e for r in run_dirs for e in fd.read_detection(r) if e.level == "document"]

    def judged(run: str, variants: set[str]) -> list[fd.Estimate]:
        """The run's document judge rows (written rating, expected rating) under ``variants``."""
        found = []
        for e in estimates:
            sid = fd._parsed(e.scorer)
            if e.dataset == run and sid and sid.is_judge and not sid.aggregate and (sid.variant or "") in variants:
                found.append(e)
        return found

    def pair_powered(run: str, a: str, b: str) -> bool:
        rows = judged(run, {a, b})
        if not rows:  # the pair's rows are named otherwise: the run's judge rows decide
            rows = [e for e in estimates if e.dataset == run and fd.role(e.scorer) in ("judge", "expected")]
        return bool(rows) and all(e.powered for e in rows)

    pairs = list(dict.fromkeys((r["run"], r["variant_a"], r["variant_b"]) for v in by_value.values() for r in v))
    ok = {(run, b) for run, a, b in pairs if pair_powered(run, a, b)}
    out = []
    for base, keep, appendix, what in (
        ("order_shift", lambda k: k in ok, False, "does the prompt order sway the judge"),
        ("appx_order_small", lambda k: k not in ok, True, "prompt order on the datasets too small to mean anything"),
    ):  # fmt: skip
        keys = sorted(
            dict.fromkeys((r["run"], r["variant_b"]) for v in by_value.values() for r in v if keep((r["run"], r["variant_b"]))),
            key=lambda k: runs.index(k[0]),
        )  # fmt: skip
        parts = fd.chunks([f"{k[0]}\t{k[1]}" for k in keys], MAX_SERIES)
        for name, part in zip(_names(base, len(parts)), parts, strict=True):
            if not part:
                continue
            picked = {tuple(p.split("\t")) for p in part}
            mine = {v: [r for r in rows if (r["run"], r["variant_b"]) in picked] for v, rows in by_value.items()}
            style = venue_style(venue, column, ncols=4)
            fig = pp.order_figure(mine, style=style, small=appendix)
            sets = list(dict.fromkeys(k[0] for k in keys if f"{k[0]}\t{k[1]}" in part))
            drawn = [(e.dataset, "document", e.scorer) for run, b in sorted(picked)
                     for a in {p[1] for p in pairs if p[0] == run and p[2] == b} for e in judged(run, {a, b})]  # fmt: skip
            out.append(PaperFigure(name, fig, style, what, inputs, appendix, sets, rows=list(dict.fromkeys(drawn))))
    return out


def _reliability_figures(run_dirs: Sequence[Path], venue: str, column: str) -> list[PaperFigure]:
    bins = fd.reliability_bins(run_dirs)
    estimates = [e for r in run_dirs for e in fd.read_detection(r)]
    inputs = [r / "metrics" / "reliability.csv" for r in run_dirs]
    out = []
    for level in ("document", "field"):
        mine = [e for e in estimates if e.level == level]
        sets = list(dict.fromkeys(e.dataset for e in mine))
        powered = [d for d in sets if fd.powered(e for e in mine if e.dataset == d)]
        ok = {(e.dataset, e.scorer) for e in mine if e.powered}
        gran = {d: fd.panel_granularity(e for e in mine if e.dataset == d) for d in sets}
        chosen = [
            b for b in bins
            if b["level"] == level and b["dataset"] in powered and (b["dataset"], b["scorer"]) in ok
            and b["method"] in ("isotonic", "platt")
            and fd.group(b["scorer"], gran[b["dataset"]]) == "main" and fd.role(b["scorer"]) != "prior"
        ]  # fmt: skip
        pairs = sorted(dict.fromkeys((b["scorer"], b["dataset"]) for b in chosen),
                       key=lambda p: (fd.order_key(p[0]), powered.index(p[1])))  # fmt: skip
        most = _most_panels(pp.reliability_height, venue, column)
        parts = [pairs[i : i + most] for i in range(0, len(pairs), most)]
        for name, part in zip(_names(f"appx_reliability_{level}", len(parts)), parts, strict=True):
            picked = set(part)
            these = [b for b in chosen if (b["scorer"], b["dataset"]) in picked]
            these.sort(key=lambda b: part.index((b["scorer"], b["dataset"])))
            style = venue_style(venue, column, ncols=min(len(part), pp.PANELS_PER_ROW + 1))
            fig = pp.reliability_grid(these, style=style)
            what = f"out-of-fold reliability of the main scores, {level}s"
            out.append(PaperFigure(name, fig, style, what, inputs, True, list(dict.fromkeys(d for _, d in part)),
                                   _scorers(these), [(d, level, s) for s, d in part]))  # fmt: skip
    return out


def build_figures(runs: Iterable[str | Path], *, venue: str = "neurips", column: str = "full") -> list[PaperFigure]:
    """Every figure of the set for ``runs``, drawn, not written."""
    run_dirs = sorted({Path(r) for r in runs}, key=lambda p: (p.name, str(p)))  # panel order: by dataset name
    for r in run_dirs:
        fd.detection_rows(r)  # a clear error naming the run that was never evaluated
    return [
        *_detection_figures(run_dirs, venue, column),
        *_by_kind_figures(run_dirs, venue, column),
        *_planted_kind_figures(run_dirs, venue, column),
        *_meaning_figures(run_dirs, venue, column),
        *_order_figures(run_dirs, venue, column),
        *_review_figures(run_dirs, venue, column),
        *_reliability_figures(run_dirs, venue, column),
    ]
