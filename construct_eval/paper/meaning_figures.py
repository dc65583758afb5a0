"""The paper's figures of what a score means as an error rate: ``meaning_ratings`` (main) and its
appendix continuations (``appx_meaning``), what each value of the judge's written 1-10 rating
means, and the out-of-fold reliability diagrams of the main scores (``appx_reliability_``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from construct_eval.display.style import venue_style
from construct_eval.paper import figure_data as fd
from construct_eval.paper import meaning_plot, messages, reliability_plot
from construct_eval.paper import paper_plots as pp
from construct_eval.paper.figure_parts import PaperFigure, Pick
from construct_eval.paper.figure_parts import every as _every
from construct_eval.paper.figure_parts import figure_names as _names
from construct_eval.paper.figure_parts import most_panels as _most_panels
from construct_eval.paper.figure_parts import shown_scorers as _scorers


def meaning_panels(run_dirs: Sequence[Path], tables: Sequence[fd.ValueTable]) -> list[fd.MeaningPanel]:
    """Each table as a cell of the meaning figure: a field rating within the fields the output
    filled, with its rows within the empty fields; none for a field rating whose outputs cannot be
    rebuilt (its fields cannot be split)."""
    panels = []
    for t in tables:
        if t.level != "field":
            panels.append(fd.MeaningPanel(t))
            continue
        run = next(r for r in run_dirs if r.name == t.dataset)
        kinds = fd.kind_value_rows(run, t.scorer)
        if kinds.get("value"):
            filled = fd.ValueTable(t.dataset, t.level, t.scorer, kinds["value"], t.path)
            panels.append(fd.MeaningPanel(filled, tuple(kinds.get("null or empty", ()))))
    return panels


def meaning_figures(run_dirs: Sequence[Path], venue: str, column: str, pick: Pick = _every) -> list[PaperFigure]:
    """``meaning_ratings`` (main): what each value of the judge's written rating means, for every
    powered rating in its default form, a row a dataset with only what was asked (as many datasets
    as a page holds; :func:`~construct_eval.paper.meaning_plot.meaning_layout`), a field rating
    within the fields the output filled (the empty fields in a note: the judge rates them 1 and
    they are seldom wrong, so pooled they make a low rating look right); ``appx_meaning``: the
    rest, and the field ratings pooled."""
    import matplotlib

    tables = [t for r in run_dirs for t in fd.value_tables(r) if pick(t.scorer)]
    if not tables:
        return []
    estimates = {(e.dataset, e.level, e.scorer): e for r in run_dirs for e in fd.read_detection(r)}
    power = {t.path: bool((e := estimates.get((t.dataset, t.level, t.scorer))) and e.powered) for t in tables}
    main = [t for t in tables if power[t.path] and fd.group(t.scorer) == "main"]
    panels = meaning_panels(run_dirs, main)
    datasets = list(dict.fromkeys(p.table.dataset for p in panels))
    ncols = meaning_plot.meaning_layout(panels)[1]
    with matplotlib.rc_context(venue_style(venue, column, ncols=ncols)):
        most = max(k for k in range(1, len(datasets) + 1)
                   if k == 1 or meaning_plot.meaning_grid_height([p for p in panels if p.table.dataset in datasets[:k]])
                   <= pp.MAX_HEIGHT_IN)  # fmt: skip
    panels = [p for p in panels if p.table.dataset in datasets[:most]]
    shown = {p.table.path for p in panels}
    rest = [t for t in tables if t.path not in shown or t.level == "field"]
    small = [t.path for t in tables if not power[t.path]]
    out = []
    if panels:
        style = venue_style(venue, column, ncols=meaning_plot.meaning_layout(panels)[1])
        fig = meaning_plot.meaning_grid(panels, style=style)
        chosen = [p.table for p in panels]
        field_runs = {t.dataset for t in chosen if t.level == "field"}
        inputs = [t.path for t in chosen] + [r / "metrics" / "values_by_output_kind.csv" for r in run_dirs
                                                 if r.name in field_runs]  # fmt: skip
        figure = PaperFigure("meaning_ratings", fig, style, "what does a 1-10 rating mean as an error rate", inputs,
                             False, list(dict.fromkeys(t.dataset for t in chosen)), _scorers(chosen),
                             [(t.dataset, t.level, t.scorer) for t in chosen], messages.meaning(panels))  # fmt: skip
        figure.tables["table_meaning_by_output_kind"] = [
            {"dataset": p.table.dataset, "level": p.table.level, "scorer": p.table.scorer, "fields": kind, **r}
            for p in panels
            if p.table.level == "field"
            for kind, rows in (("value", p.table.rows), ("null or empty", p.empty))
            for r in rows
        ]
        out.append(figure)
    most = _most_panels(meaning_plot.meaning_height, venue, column)
    parts = [rest[i : i + most] for i in range(0, len(rest), most)]
    for name, part in zip(_names("appx_meaning", len(parts)), parts, strict=True):
        style = venue_style(venue, column, ncols=min(len(part), pp.PANELS_PER_ROW + 1))
        fig = meaning_plot.meaning_figure(part, style=style, small=small)
        sets = list(dict.fromkeys(t.dataset for t in part))
        out.append(PaperFigure(name, fig, style, "what each rating value means: other orders, field minima, "
                               "fields pooled, small datasets", [t.path for t in part], True, sets,
                               _scorers(part), [(t.dataset, t.level, t.scorer) for t in part]))  # fmt: skip
    return out


def reliability_figures(run_dirs: Sequence[Path], venue: str, column: str, pick: Pick = _every) -> list[PaperFigure]:
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
            and fd.group(b["scorer"], gran[b["dataset"]]) == "main" and fd.role(b["scorer"]) != "prior" and pick(b["scorer"])
        ]  # fmt: skip
        pairs = sorted(dict.fromkeys((b["scorer"], b["dataset"]) for b in chosen),
                       key=lambda p: (fd.order_key(p[0]), powered.index(p[1])))  # fmt: skip
        most = _most_panels(reliability_plot.reliability_height, venue, column)
        parts = [pairs[i : i + most] for i in range(0, len(pairs), most)]
        for name, part in zip(_names(f"appx_reliability_{level}", len(parts)), parts, strict=True):
            picked = set(part)
            these = [b for b in chosen if (b["scorer"], b["dataset"]) in picked]
            these.sort(key=lambda b: part.index((b["scorer"], b["dataset"])))
            style = venue_style(venue, column, ncols=min(len(part), pp.PANELS_PER_ROW + 1))
            fig = reliability_plot.reliability_grid(these, style=style)
            what = f"out-of-fold reliability of the main scores, {level}s"
            out.append(PaperFigure(name, fig, style, what, inputs, True, list(dict.fromkeys(d for _, d in part)),
                                   _scorers(these), [(d, level, s) for s, d in part]))  # fmt: skip
    return out
