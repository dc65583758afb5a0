"""The paper's figure set from recorded runs (``construct-eval figures``): one message a figure.

At most :data:`MAX_MAIN` main figures, one for each of the paper's questions, each with every
dataset that can answer it and a one-sentence message computed from what it draws
(:mod:`~construct_eval.paper.messages`):

- ``construct_vs_baselines``: does CONSTRUCT (the ``construct`` scorer, the authors' TLM 0.0.3)
  find wrong outputs and fields better than its baselines (the judge per output and per field,
  the generator's token log-probs), on the items every method scored (the run's
  ``paper_comparison`` table);
- ``detect_document``: which score finds wrong outputs, on every dataset whose errors a generator
  made;
- ``detect_field_filled``: which score finds wrong values among the fields an output filled (a
  pooled field AUROC mixes filled and empty fields; both are in the appendix), on the same;
- ``meaning_ratings``: what each value of the judge's written 1-10 rating means as an error rate;
- ``order_shift``: does the prompt order sway the judge;
- ``review_document``: what a review budget buys, on the same.

The three that ask which score finds errors draw only the datasets whose errors a generator made
(:func:`main_and_planted`): planted errors are found by checks written knowing them and by no
generator's scores, so their panels are appendix figures of the same form
(``appx_detect_document_planted``, ``appx_detect_field_filled_planted``,
``appx_review_document_planted``), each with its own message, whose first clause says the errors
were planted. The meaning and order figures may rest on planted errors; their messages say so
first (:func:`~construct_eval.paper.messages.planted_scope`).

A main detection or review figure draws at most :data:`~construct_eval.display.style.MAX_SERIES`
scores (:data:`MAIN_ROLES`, in that priority), only rows with enough wrong and right items and
documents to mean something (:func:`~construct_eval.paper.figure_data.row_powered`), and only
datasets where at least half its rows are drawn: no panel is mostly "not run". Its grid has no
empty cell (a spare one holds the legend: :func:`~construct_eval.paper.paper_plots.fill_columns`).
Appendix figures (``appx_*``) hold everything: every score on every dataset (the datasets too
small to mean anything marked), fields pooled and by output kind, per planted error kind, the
other prompt orders, the combinations, other forms of a score, AUPRC, the field-level review,
reliability diagrams. Every figure is saved as PDF, SVG and 300-dpi PNG (byte-identical for
identical inputs) with its numbers as LaTeX and CSV tables; ``figures.md`` shows each main figure
with its message and lists the others, and ``manifest.json`` maps each short file name to its
message, datasets, the scores it draws (internal name -> label shown) and the run files (and
hashes) it was made from. :func:`build_figures` makes the figures without writing anything (the
readability tests check each); ``only`` makes one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from construct_eval.display.style import MAX_SERIES, display_name, venue_style
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper import figure_data as fd
from construct_eval.paper import (
    forest_plot,
    messages,
    review_plot,
)
from construct_eval.paper import paper_plots as pp
from construct_eval.paper.captions import Caption
from construct_eval.paper.construct_figures import construct_figures
from construct_eval.paper.figure_parts import MAX_PANELS, PaperFigure, Pick
from construct_eval.paper.figure_parts import every as _every
from construct_eval.paper.figure_parts import figure_names as _names
from construct_eval.paper.figure_parts import shown_scorers as _scorers
from construct_eval.paper.meaning_figures import meaning_figures, reliability_figures
from construct_eval.paper.order_figures import order_figures
from construct_eval.reports import figure_pairs

MAX_MAIN = 6
"""The most main figures a set holds: one a question."""
MAIN_ROLES = ("judge", "judge-free", "expected", "p-correct", "token_logprob", "plausibility", "prior")
"""The scores a main detection or review figure draws, in priority order, at most
:data:`~construct_eval.display.style.MAX_SERIES` of them: the judge's written rating (forced, and
free: the paper's recipe), its expected rating and P(correct), the generator's token log-probs
(the paper's baseline), the label-free plausibility checks and the field prior (uses the labels).
The others (self-consistency, the reflection ensemble, the lowest field rating, the contact rule,
CONSTRUCT, which has its own figure) are in the appendix figures."""
MAIN_LABEL_WIDTH = 32
"""A main forest figure's row labels on one line each ("expected rating (forced), per field"): its six
rows then fit three lines of panels on a page."""
MAIN_NAMES = (
    "construct_vs_baselines", "detect_document", "detect_field_filled", "meaning_ratings", "order_shift",
    "review_document",
)  # fmt: skip
"""The main figures, in the order of the paper's questions."""


def _split_by_power(estimates: Sequence[fd.Estimate]) -> tuple[list[str], list[str]]:
    """(datasets with a powered label-free row, the others), in the estimates' order."""
    datasets = list(dict.fromkeys(e.dataset for e in estimates))
    powered = [d for d in datasets if fd.powered(e for e in estimates if e.dataset == d)]
    return powered, [d for d in datasets if d not in powered]


PLANTED = "_planted"
"""The end of an appendix figure's name that draws a main detection or review figure's planted-error
panels (``appx_detect_document_planted``): the main figure draws the generators' errors alone."""


def main_and_planted(base: str, datasets: Iterable[str]) -> list[tuple[str, list[str]]]:
    """A main figure that asks which score finds errors, split by how the errors arose: (``base``,
    the datasets whose errors a generator made) for the main figure, then (``appx_<base>_planted``,
    the datasets with errors the package planted) for its appendix figure
    (:func:`~construct_eval.paper.figure_data.generators_errors`). Planted errors are found by
    checks written knowing them and by no generator's scores, so they cannot answer the paper's
    question beside a generator's errors; they are drawn apart, with their own caption."""
    given = list(dict.fromkeys(datasets))
    made = [d for d in given if fd.generators_errors(d)]
    return [(base, made), (f"appx_{base}{PLANTED}", [d for d in given if d not in made])]


def _scoped(what: str, name: str) -> str:
    """What figure ``name`` shows: a main figure's question as it is; its planted-error appendix
    figure's with where it asks it ("..., on errors the package planted")."""
    return f"{what}, on errors the package planted" if name.endswith(PLANTED) else what


def _table_stem(name: str) -> str:
    """A figure's name as its tables are named: ``appx_detect_document_planted`` ->
    ``detect_document_planted`` (a main figure's, ``detect_document``, as it is)."""
    return name.removeprefix("appx_")


def _panel_order(panels: Iterable[str]) -> list[str]:
    """Panels (a dataset, or a dataset and an output kind) in reading order: planted errors, then
    planted near misses, then generators' own errors (:func:`~construct_eval.paper.figure_data.error_rank`),
    otherwise in the order given."""
    given = list(dict.fromkeys(panels))
    return sorted(given, key=lambda p: (fd.error_rank(dataset_label(p.split("\t")[0])[1]), given.index(p)))


def main_rows(
    estimates: Sequence[fd.Estimate], granularity: dict[str, str], roles: Sequence[str] | None = MAIN_ROLES,
) -> list[fd.Estimate]:  # fmt: skip
    """The rows a main detection or review figure draws: each dataset's powered rows
    (:func:`~construct_eval.paper.figure_data.row_powered`) of its scores in their default form on
    its panel's granularity, of the first :data:`~construct_eval.display.style.MAX_SERIES` of
    ``roles`` present (None: any score, in reading order), on the panels (datasets, or datasets and
    output kinds) where at least half the figure's rows are drawn and one is label-free; at most
    :data:`MAX_PANELS` panels, in :func:`_panel_order`."""
    chosen = [e for e in estimates if e.powered and fd.group(e.scorer, granularity[e.dataset]) == "main"
              and (roles is None or fd.role(e.scorer) in roles)]  # fmt: skip
    if roles is not None:
        present = sorted({fd.role(e.scorer) for e in chosen}, key=list(roles).index)[:MAX_SERIES]
        chosen = [e for e in chosen if fd.role(e.scorer) in present]
    else:
        keep = sorted({pp.row_labels(chosen)[e.scorer] for e in chosen},
                      key=lambda lab: min(fd.order_key(e.scorer) for e in chosen if pp.row_labels(chosen)[e.scorer] == lab))[:MAX_SERIES]  # fmt: skip
        chosen = [e for e in chosen if pp.row_labels(chosen)[e.scorer] in keep]
    panels = _panel_order(e.panel for e in chosen)
    while True:
        label_of = pp.row_labels(chosen)
        rows = set(label_of.values())
        kept = [p for p in panels
                if fd.powered(e for e in chosen if e.panel == p)
                and 2 * len({label_of[e.scorer] for e in chosen if e.panel == p}) >= len(rows)][:MAX_PANELS]  # fmt: skip
        if kept == panels:
            return sorted(chosen, key=lambda e: (panels.index(e.panel), fd.order_key(e.scorer)))
        panels = kept
        chosen = [e for e in chosen if e.panel in kept]


def _fits(height: Callable[[list[str]], float], panels: list[str], venue: str, column: str) -> list[str]:
    """The ``panels`` a main figure can hold no taller than :data:`paper_plots.MAX_HEIGHT_IN`
    (``height``: the figure's height for so many panels, in the venue's style), in their order:
    where they do not all fit, a planted-error panel goes before a near-miss one and that before
    a generator's errors (the errors the paper's question is about; the last of a kind first); the
    rest are in the appendix figures, which hold every dataset."""
    import matplotlib

    def rank(p: str) -> int:
        return fd.error_rank(dataset_label(p.split("\t")[0])[1])

    with matplotlib.rc_context(venue_style(venue, column, ncols=pp.PANELS_PER_ROW + 1)):
        while len(panels) > 1 and height(panels) > pp.MAX_HEIGHT_IN:
            least = min(rank(p) for p in panels)
            drop = [p for p in panels if rank(p) == least][-1]
            panels = [p for p in panels if p != drop]
    return panels


def _main_forest(
    name: str, rows: Sequence[fd.Estimate], context: Sequence[fd.Estimate], granularity: dict[str, str],
    what: str, message: Caption | Callable[..., Caption], inputs: list[Path], venue: str, column: str,
    levels: Callable[[fd.Estimate], str],
) -> PaperFigure | None:  # fmt: skip
    """A main forest figure of ``rows`` (from :func:`main_rows`), its panels filling the grid; a
    figure row a panel lacks says "too few: appendix" where ``context`` holds it underpowered."""
    import matplotlib

    if not rows:
        return None

    def height(panels: list[str]) -> float:
        mine = [e for e in rows if e.panel in panels]
        return forest_plot.forest_height(mine, pp.fill_columns(len(panels)), MAIN_LABEL_WIDTH)

    every = list(dict.fromkeys(e.panel for e in rows))
    panels = _fits(height, every, venue, column)
    left = list(dict.fromkeys(e.dataset for e in rows if e.panel not in panels))
    rows = [e for e in rows if e.panel in panels]
    with matplotlib.rc_context(venue_style(venue, column)):
        line = pp.fill_columns(len(panels))
    label_of = pp.row_labels(rows)
    shown = set(label_of.values())
    moved = {p: {display_name(e.scorer) for e in context if e.panel == p and not e.powered
                 and display_name(e.scorer) in shown} for p in panels}  # fmt: skip
    style = venue_style(venue, column, ncols=line)
    fig = forest_plot.forest_figure(
        rows, style=style, granularity=granularity, moved=moved, per_line=line, label_width=MAIN_LABEL_WIDTH
    )
    said = message(rows) if callable(message) else message
    if left:  # a panel that does not fit this width is named, not dropped silently
        names = [" ".join(dataset_label(d)[0:1]) + f" ({dataset_label(d)[1].split(',')[0]})" for d in left]
        said = said.with_also(f"At this width the figure leaves out {', '.join(names)} for room; the full-width "
                              f"figure and the appendix figures draw {'it' if len(names) == 1 else 'them'}.")  # fmt: skip
    return PaperFigure(name, fig, style, what, inputs, name.startswith("appx_"), list(dict.fromkeys(e.dataset for e in rows)),
                       _scorers(rows), [(e.dataset, levels(e), e.scorer) for e in rows], said)  # fmt: skip


def _pieces(
    rows: Sequence[fd.Estimate], base: str, what: str, granularity: dict[str, str], venue: str, column: str,
    inputs: list[Path], *, metric: str = "auroc", small: Sequence[str] = (),
) -> list[PaperFigure]:  # fmt: skip
    """Appendix forest figures of ``rows``: datasets share a figure while their scores fit
    (:func:`~construct_eval.paper.figure_data.figure_pieces`), each no taller than a page; a
    dataset in ``small`` is marked "too few to judge"."""
    if not rows:
        return []
    datasets = list(dict.fromkeys(e.dataset for e in rows))
    scorers = sorted(dict.fromkeys(e.scorer for e in rows), key=fd.order_key)
    present = {d: {e.scorer for e in rows if e.dataset == d} for d in datasets}
    pieces = []
    for sets, part in fd.figure_pieces(datasets, present, scorers, _how(datasets), pp.row_labels(rows)):
        mine = [e for e in rows if e.scorer in part and e.dataset in sets]
        for these in _fit_height(mine, sets, venue, column):
            picked = sorted((e for e in mine if e.dataset in these),
                            key=lambda e, these=these, part=part: (these.index(e.dataset), part.index(e.scorer)))  # fmt: skip
            pieces.append((these, picked))
    out = []
    for name, (sets, mine) in zip(_names(base, len(pieces)), pieces, strict=True):
        style = venue_style(venue, column, ncols=min(len(sets), pp.PANELS_PER_ROW + 1))
        fig = forest_plot.forest_figure(mine, metric=metric, style=style, granularity=granularity,
                                        small=[d for d in sets if d in small], too_few="too few to judge")  # fmt: skip
        out.append(PaperFigure(name, fig, style, what, inputs, True, sets, _scorers(mine),
                               [(e.dataset, f"field:{e.kind}" if e.kind else e.level, e.scorer) for e in mine]))  # fmt: skip
    return out


def _paired_on_common(
    run_dirs: Sequence[Path], drawn: Sequence[fd.Estimate]
) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The comparisons a detection message makes between scores that rated different items
    (:func:`messages.unpaired`), each on the items both rated
    (:func:`~construct_eval.reports.figure_pairs.paired_on_common`):
    (panel, score, judge's score) -> the comparison, a row of the figure's common-items table."""
    out = {}
    for other, judge in messages.unpaired(drawn):
        run = next(r for r in run_dirs if r.name == other.dataset)
        pair = figure_pairs.paired_on_common(run, other.level, other.scorer, judge.scorer, kind=other.kind)
        if pair is not None:
            out[(other.panel, other.scorer, judge.scorer)] = pair
    return out


def _detection_figures(run_dirs: Sequence[Path], venue: str, column: str, pick: Pick = _every) -> list[PaperFigure]:
    """``detect_document`` (main) and its planted-error panels (:func:`_detect_document`), and the
    appendix figures of every detection row: every score in
    its default form on every dataset (``appx_detect_document``, ``appx_detect_field``: fields
    pooled over filled and empty), the other prompt orders, combinations, other forms of a score,
    and AUPRC."""
    out = []
    inputs = [r / "metrics" / "detection.csv" for r in run_dirs] + fd.document_class_files(run_dirs)
    for metric in ("auroc", "auprc"):
        estimates = [e for r in run_dirs for e in fd.read_detection(r, metric) if pick(e.scorer)]
        for level in ("document", "field"):
            chosen = [e for e in estimates if e.level == level]
            if not chosen:
                continue
            every = list(dict.fromkeys(e.dataset for e in chosen))
            gran = {d: fd.panel_granularity(e for e in chosen if e.dataset == d) for d in every}
            group_of = {(e.dataset, e.scorer): fd.group(e.scorer, gran[e.dataset]) for e in chosen}
            unit = "documents" if level == "document" else "fields"
            main_group = [e for e in chosen if group_of[(e.dataset, e.scorer)] == "main"]
            if metric == "auroc" and level == "document":
                out += _detect_document(run_dirs, main_group, gran, inputs, venue, column, pick)
            if metric == "auprc":
                rows = [e for e in main_group if e.powered]
                out += _pieces(rows, f"appx_auprc_{level}", f"AUPRC for wrong {unit}, main scores", gran, venue,
                               column, inputs, metric="auprc")  # fmt: skip
                continue
            small = [d for d in every if not fd.powered(e for e in main_group if e.dataset == d)]
            what = ("every score on every dataset, documents" if level == "document" else
                    "every score on every dataset, fields pooled over filled and empty (a pooled AUROC mixes the two)")  # fmt: skip
            out += _pieces(main_group, f"appx_detect_{level}", what, gran, venue, column, inputs, small=small)
            for g in ("orders", "combinations", "other"):
                rows = [e for e in chosen if group_of[(e.dataset, e.scorer)] == g]
                if not rows:
                    continue
                if g == "orders":  # the default order beside the others, as the reference
                    rows = [e for e in main_group if e.dataset in {r.dataset for r in rows}
                            and fd.role(e.scorer) in ("judge", "expected")] + rows  # fmt: skip
                desc = {"orders": "under other prompt orders (default order for reference)",
                        "combinations": "combined scores", "other": "other forms of each score"}[g]  # fmt: skip
                out += _pieces(
                    rows, f"appx_{g}_{level}", f"AUROC for wrong {unit}: {desc}", gran, venue, column, inputs
                )
    return out


def _detect_document(
    run_dirs: Sequence[Path], main_group: Sequence[fd.Estimate], gran: dict[str, str], inputs: list[Path],
    venue: str, column: str, pick: Pick,
) -> list[PaperFigure]:  # fmt: skip
    """``detect_document`` (main) on the datasets whose errors a generator made, and
    ``appx_detect_document_planted`` on those with planted errors (:func:`main_and_planted`), each
    with its own message (:func:`messages.detection`) and its common-items table."""
    out = []
    for name, datasets in main_and_planted("detect_document", (e.dataset for e in main_group)):
        group = [e for e in main_group if e.dataset in datasets]
        rows = main_rows(group, gran, MAIN_ROLES if pick is _every else None)
        paired: dict[tuple[str, str, str], dict[str, Any]] = {}

        def message(drawn: Sequence[fd.Estimate], paired: dict[Any, dict[str, Any]] = paired) -> Caption:
            paired.update(_paired_on_common(run_dirs, drawn))
            return messages.detection(drawn, "wrong outputs", paired=paired)

        what = _scoped("which score finds wrong outputs", name)
        fig = _main_forest(name, rows, group, gran, what, message, inputs, venue, column, lambda e: e.level)
        if fig is not None and paired:
            fig.tables[f"table_{_table_stem(name)}_common_items"] = list(paired.values())
        out += [fig] if fig else []
    return out


def _by_kind_figures(run_dirs: Sequence[Path], venue: str, column: str, pick: Pick = _every) -> list[PaperFigure]:
    """``detect_field_filled`` (main): which score finds wrong values among the fields an output
    filled, one panel a dataset whose errors a generator made, and its planted-error panels
    (:func:`_detect_filled`); ``appx_detect_field_by_kind``: every powered row within the filled
    and within the empty fields of each dataset (a pooled field AUROC mixes the two)."""
    estimates = [e for r in run_dirs for e in fd.read_by_kind(r) if pick(e.scorer)]
    if not estimates:
        return []
    pooled = [e for r in run_dirs for e in fd.read_detection(r) if e.level == "field"]
    every = list(dict.fromkeys(e.dataset for e in estimates))
    gran = {d: fd.panel_granularity(e for e in pooled if e.dataset == d) for d in every}
    chosen = [e for e in estimates if fd.group(e.scorer, gran[e.dataset]) == "main"]
    inputs = [r / "metrics" / "detection_by_output_kind.csv" for r in run_dirs
              if (r / "metrics" / "detection_by_output_kind.csv").exists()] + fd.document_class_files(run_dirs)  # fmt: skip
    out = []
    filled = [e for e in chosen if e.kind == "value"]
    for name, datasets in main_and_planted("detect_field_filled", (e.dataset for e in filled)):
        within = [r / "metrics" / "within_field.csv" for r in run_dirs
                  if r.name in datasets and (r / "metrics" / "within_field.csv").exists()]  # fmt: skip
        out += _detect_filled(run_dirs, name, [e for e in filled if e.dataset in datasets], gran, inputs + within,
                              venue, column, pick)  # fmt: skip
    datasets = [d for d in every if fd.powered(e for e in chosen if e.dataset == d)]
    rows = [e for e in chosen if e.dataset in datasets and e.powered]
    if not rows:
        return out
    order = list(fd.KIND_LABELS)
    scorers = sorted(dict.fromkeys(e.scorer for e in rows), key=fd.order_key)
    per_dataset = {d: {e.scorer for e in rows if e.dataset == d} for d in datasets}  # the rows its panels share
    pieces = []
    for sets, part in fd.figure_pieces(datasets, per_dataset, scorers, _how(datasets), pp.row_labels(rows)):
        mine = [e for e in rows if e.scorer in part and e.dataset in sets]
        for these in _fit_height(mine, sets, venue, column):
            picked = [e for e in mine if e.dataset in these]
            picked.sort(key=lambda e: (these.index(e.dataset), order.index(e.kind), part.index(e.scorer)))
            pieces.append((these, picked))
    what = "every score within the filled and within the empty fields of each dataset"
    for name, (sets, mine) in zip(_names("appx_detect_field_by_kind", len(pieces)), pieces, strict=True):
        style = venue_style(venue, column, ncols=2)
        drawn = {e.panel for e in mine}
        weak = {e.panel: set() for e in mine}
        for e in chosen:
            if e.panel in drawn and not e.powered and e.scorer in {m.scorer for m in mine}:
                weak[e.panel].add(display_name(e.scorer))
        fig = forest_plot.forest_figure(mine, style=style, granularity=gran, moved=weak, too_few="too few to judge")
        out.append(PaperFigure(name, fig, style, what + _left_out(chosen, sets, drawn), inputs, True, sets, _scorers(mine),
                               [(e.dataset, f"field:{e.kind}", e.scorer) for e in mine]))  # fmt: skip
    return out


def _detect_filled(
    run_dirs: Sequence[Path], name: str, filled: Sequence[fd.Estimate], gran: dict[str, str], inputs: list[Path],
    venue: str, column: str, pick: Pick,
) -> list[PaperFigure]:  # fmt: skip
    """``name`` (``detect_field_filled``, or its planted-error appendix figure): which score finds
    wrong values among the fields an output filled, a panel a dataset of ``filled`` (rows within
    filled fields) where the judge was drawn; with the tables its message quotes: the AUROCs drawn,
    the judge's rows within each field where it leads, and the comparisons on common items."""
    rows = main_rows(filled, gran, MAIN_ROLES if pick is _every else None)
    judged = {e.panel for e in rows if fd.role(e.scorer) in messages.JUDGE_ROLES}
    rows = [e for e in rows if e.panel in judged]  # a panel without the judge cannot answer: in the appendix
    within: dict[tuple[str, str], list[dict[str, Any]]] = {}
    paired: dict[tuple[str, str, str], dict[str, Any]] = {}

    def message(drawn: Sequence[fd.Estimate]) -> Caption:
        for e in messages.judge_leads(drawn):
            run = next(r for r in run_dirs if r.name == e.dataset)
            within[(e.dataset, e.scorer)] = fd.within_field_rows(run, e.scorer)
        paired.update(_paired_on_common(run_dirs, drawn))
        return messages.detection(drawn, "wrong values among the fields an output filled", within, paired)

    what = _scoped("which score finds wrong values among the fields an output filled", name)
    fig = _main_forest(name, rows, filled, gran, what, message, inputs, venue, column, lambda e: f"field:{e.kind}")
    if fig is None:
        return []
    stem = _table_stem(name)
    drawn = set(fig.rows)  # the AUROCs drawn: within filled fields, which no pooled field table holds
    fig.tables[f"table_{stem}"] = [
        {"dataset": e.dataset, "fields": "filled", "scorer": e.scorer, "label": display_name(e.scorer),
         "auroc": round(e.value, 4), "low": round(e.low, 4), "high": round(e.high, 4), "n": e.n,
         "wrong": e.positives, "underpowered": e.underpowered, "flat": e.flat}
        for e in filled if (e.dataset, f"field:{e.kind}", e.scorer) in drawn
    ]  # fmt: skip
    if within:
        fig.tables[f"table_within_field{stem.removeprefix('detect_field_filled')}"] = [
            r for rows in within.values() for r in rows
        ]
    if paired:
        fig.tables[f"table_{stem}_common_items"] = list(paired.values())
    return [fig]


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
        f"{dataset_label(d)[0]}, {fd.KIND_LABELS[k]} ({e.positives} wrong of {e.n})"
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


def _planted_kind_figures(run_dirs: Sequence[Path], venue: str, column: str, pick: Pick = _every) -> list[PaperFigure]:
    """``appx_planted_kind``: which planted errors each main field score finds, per kind (the
    near misses first), on every dataset with planted errors and a powered kind. At most
    :data:`~construct_eval.display.style.MAX_SERIES` scores and one line of panels a figure."""
    from construct_eval.paper import planted_plots

    chosen = [e for e in planted_estimates(run_dirs) if pick(e.scorer)]
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
    for name, (sets, mine) in zip(_names("appx_planted_kind", len(pieces)), pieces, strict=True):
        style = venue_style(venue, column, ncols=min(len(sets), per_figure))
        fig = planted_plots.planted_kind_figure(mine, style=style)
        drawn = list(dict.fromkeys((e.dataset, f"planted:{e.kind}:{e.planted}", e.scorer) for e in mine if e.powered))
        out.append(PaperFigure(name, fig, style, what, inputs, True, sets, _scorers(mine), drawn))
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
        return forest_plot.forest_height([e for e in estimates if e.dataset in group])

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
    _, found = review_plot.perfect_review(first.n, first.positives, budget)
    return found[-1] - budget / 100


RINGED = "ringed, in its colour: the judge's score\nthat finds the most at 20% reviewed"
"""The review figure's legend entry for the ring (:func:`messages.judge_best_review`): the caption's
"the judge's best" there is chosen by what it finds, where the detection figures choose by AUROC."""


def _review_figures(run_dirs: Sequence[Path], venue: str, column: str, pick: Pick = _every) -> list[PaperFigure]:
    """``review_document`` (main) and its planted-error panels (:func:`_review_main`), on the
    datasets where a perfect score could find :data:`MIN_HEADROOM` more than random order; the
    appendix: every powered main-group row at each level (``appx_review_document``,
    ``appx_review_field``)."""
    out = []
    inputs = [r / "metrics" / "detection.csv" for r in run_dirs] + fd.document_class_files(run_dirs)
    for level in ("document", "field"):
        rows = [r for r in fd.review_rows(run_dirs, level) if pick(r["scorer"])]
        estimates = [e for r in run_dirs for e in fd.read_detection(r) if e.level == level and pick(e.scorer)]
        if not rows or not estimates:
            continue
        powered, _ = _split_by_power(estimates)
        budgets = sorted({r["budget"] for r in rows})
        powered = [d for d in powered if _review_headroom(estimates, d, budgets[-1]) >= MIN_HEADROOM]
        gran = {d: fd.panel_granularity(e for e in estimates if e.dataset == d) for d in powered}
        unit = "documents" if level == "document" else "fields"
        what = f"what a review budget buys: wrong {unit} found when the lowest-scored are reviewed first"
        if level == "document":
            for name, datasets in main_and_planted("review_document", powered):
                out += _review_main(run_dirs, name, rows, [e for e in estimates if e.dataset in datasets], gran,
                                    inputs, venue, column, pick)  # fmt: skip
        ok = {(e.dataset, e.scorer) for e in estimates if e.powered}
        chosen = [r for r in rows if r["dataset"] in powered and (r["dataset"], r["scorer"]) in ok
                  and fd.group(r["scorer"], gran[r["dataset"]]) == "main"]  # fmt: skip
        scorers = sorted(dict.fromkeys(r["scorer"] for r in chosen), key=fd.order_key)
        present = {d: {r["scorer"] for r in chosen if r["dataset"] == d} for d in powered}
        pieces: list[tuple[list[str], list[dict[str, Any]]]] = []  # (datasets, rows) of each figure
        for sets, part in fd.figure_pieces(powered, present, scorers, _how(powered), pp.row_labels(chosen)):
            part_rows = [r for r in chosen if r["scorer"] in part and r["dataset"] in sets]
            if not part_rows:
                continue

            def fit(group: list[str], part_rows: list[dict[str, Any]] = part_rows) -> float:
                return review_plot.review_height([r for r in part_rows if r["dataset"] in group])

            for these in _fit_height(estimates, sets, venue, column, fit):  # no taller than a page allows
                pieces.append((these, [r for r in part_rows if r["dataset"] in these]))
        for name, (sets, part_rows) in zip(_names(f"appx_review_{level}", len(pieces)), pieces, strict=True):
            style = venue_style(venue, column, ncols=min(len(sets), pp.PANELS_PER_ROW + 1))
            fig = review_plot.review_figure(part_rows, level=level, style=style, granularity=gran)
            drawn = list(dict.fromkeys((r["dataset"], level, r["scorer"]) for r in part_rows))
            out.append(PaperFigure(name, fig, style, what, inputs, True, sets, _scorers(part_rows), drawn))
    return out


def _beside() -> bool:
    """Whether a main review figure's legend takes a cell of its grid (:func:`review_plot.review_grid`):
    at the text width (three panels a row), where its long legend under a row of panels squeezed
    them to a strip; in one column a lone panel keeps its legend under it."""
    return pp.per_row() > 2


def _review_main(
    run_dirs: Sequence[Path], name: str, rows: Sequence[dict[str, Any]], estimates: Sequence[fd.Estimate],
    gran: dict[str, str], inputs: list[Path], venue: str, column: str, pick: Pick,
) -> list[PaperFigure]:  # fmt: skip
    """``name`` (``review_document``, or its planted-error appendix figure): what a review budget
    buys, the rows of the detection figure (:func:`main_rows`) on the datasets of ``estimates``;
    where a panel's scores rated different items, every score that rated at least as many as the
    judge's drawn scores is drawn on the items all of them rated
    (:func:`~construct_eval.reports.figure_pairs.common_review_rows`), in the table its message quotes."""
    import matplotlib

    main = main_rows(estimates, gran, MAIN_ROLES if pick is _every else None)
    keys = {(e.dataset, e.scorer) for e in main}
    mine = [r for r in rows if (r["dataset"], r["scorer"]) in keys]
    mine.sort(key=lambda r: ([e.dataset for e in main].index(r["dataset"]), fd.order_key(r["scorer"])))
    by_name = {r.name: r for r in run_dirs}
    common = []
    for d in dict.fromkeys(r["dataset"] for r in mine):
        panel = [r for r in mine if r["dataset"] == d]
        judged = [r["n"] for r in panel
                  if fd.role(r["scorer"]) in messages.JUDGE_ROLES and not review_plot.constant_review(r)]  # fmt: skip
        common += figure_pairs.common_review_rows(by_name[d], panel, max(judged or [r["n"] for r in panel]))
    mine = common

    def height(panels: list[str], mine: list[dict[str, Any]] = mine) -> float:
        return review_plot.review_height([r for r in mine if r["dataset"] in panels], pp.fill_columns(len(panels)),
                                         ringed=True, beside=_beside())  # fmt: skip

    sets = _fits(height, list(dict.fromkeys(r["dataset"] for r in mine)), venue, column)
    mine = [r for r in mine if r["dataset"] in sets]
    if not mine:
        return []
    with matplotlib.rc_context(venue_style(venue, column)):
        line, beside = pp.fill_columns(len(sets)), _beside()
    style = venue_style(venue, column, ncols=review_plot.review_grid(len(sets), line, beside)[1])
    best = messages.judge_best_review(mine)  # the curve the caption calls the judge's best, ringed
    fig = review_plot.review_figure(mine, level="document", style=style, granularity=gran, per_line=line, ringed=best,
                           ringed_label=RINGED, beside=beside)  # fmt: skip
    drawn = list(dict.fromkeys((r["dataset"], "document", r["scorer"]) for r in mine))
    recomputed = [r for r in mine if r.get("common_of")]  # drawn on common items: no run table holds them
    read = inputs + [by_name[d] / f for d in dict.fromkeys(r["dataset"] for r in recomputed)
                     for f in fd.run_files() if (by_name[d] / f).exists()]  # fmt: skip
    what = _scoped("what does a review budget buy", name)
    figure = PaperFigure(name, fig, style, what, read, name.startswith("appx_"), sets, _scorers(mine), drawn,
                         messages.review(mine, "outputs"))  # fmt: skip
    if recomputed:
        figure.tables[f"table_{_table_stem(name)}_common_items"] = recomputed
    return [figure]


BUILDERS: tuple[tuple[tuple[str, ...], Callable[..., list[PaperFigure]]], ...] = (
    (("construct_vs_baselines",), construct_figures),
    (("detect_document", "appx_detect_document_planted", "appx_detect_document", "appx_detect_field", "appx_orders_",
      "appx_combinations_",
      "appx_other_", "appx_auprc_"), _detection_figures),
    (("detect_field_filled", "appx_detect_field_filled_planted", "appx_detect_field_by_kind"), _by_kind_figures),
    (("meaning_ratings", "appx_meaning"), meaning_figures),
    (("order_shift", "appx_order_small"), order_figures),
    (("review_document", "appx_review_"), _review_figures),
    (("appx_planted_kind",), _planted_kind_figures),
    (("appx_reliability_",), reliability_figures),
)  # fmt: skip
"""Each builder with the names (or name prefixes) of the figures it makes, main figures first."""


class UnknownFigure(ValueError):
    """``only`` names no figure the set makes (the message lists those its builder made)."""


def scorer_filter(scorers: Iterable[str] | None) -> Pick:
    """Which scorers a figure draws (``--scorers``): every one (None), or those named, by their
    internal name (``judge-doc``, ``token_logprob@top``), the label a figure shows them by
    ("token log-probs"), or, in the CONSTRUCT figure, the paper comparison's key (``construct``)."""
    if scorers is None:
        return _every
    wanted = {s.strip().lower() for s in scorers if s.strip()}

    def pick(scorer: str) -> bool:
        return scorer.lower() in wanted or display_name(scorer).lower() in wanted

    return pick


def build_figures(
    runs: Iterable[str | Path], *, venue: str = "neurips", column: str = "full", only: str | None = None,
    scorers: Iterable[str] | None = None,
) -> list[PaperFigure]:  # fmt: skip
    """Every figure of the set for ``runs``, drawn, not written, main figures first; ``only``: the
    figure of that name alone (:class:`UnknownFigure` naming the set's figures if there is none);
    ``scorers``: only those scorers drawn (:func:`scorer_filter`), every figure's other rules kept
    (a main figure then draws the scorers named, whatever their role)."""
    run_dirs = sorted({Path(r) for r in runs}, key=lambda p: (p.name, str(p)))  # panel order: by dataset name
    for r in run_dirs:
        fd.detection_rows(r)  # a clear error naming the run that was never evaluated
    pick = scorer_filter(scorers)
    figures = []
    matched = False
    for names, build in BUILDERS:
        if only is None or any(only == n or (n.endswith("_") and only.startswith(n)) or only.startswith(n + "_")
                               for n in names):  # fmt: skip
            matched = True
            figures += build(run_dirs, venue, column, pick)
    if only is not None:
        found = [f for f in figures if f.name == only]
        if not found:
            made = [f.name for f in figures] or ["none for these runs"]
            known = ", ".join(n for names, _ in BUILDERS for n in names)
            raise UnknownFigure(
                f"no figure {only!r} in this set; "
                + (f"its builder made: {', '.join(made)}" if matched else f"figures are named (or begin): {known}")
            )
        return found
    order = {name: k for k, name in enumerate(MAIN_NAMES)}
    return sorted(figures, key=lambda f: (f.appendix, order.get(f.name, len(order))))
