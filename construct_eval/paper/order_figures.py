"""The paper's figures of prompt order: ``order_shift`` (main), does the order of the prompt's
sections sway the judge, and its appendix figure of the small shifts (``appx_order_small``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from construct_eval.display.style import MAX_SERIES, venue_style
from construct_eval.paper import figure_data as fd
from construct_eval.paper import messages, order_plot
from construct_eval.paper.captions import Caption
from construct_eval.paper.figure_parts import PaperFigure, Pick
from construct_eval.paper.figure_parts import every as _every
from construct_eval.paper.figure_parts import figure_names as _names

_ORDER_VALUE = {"judge": "rating", "expected": "expected_rating"}
"""The judge rows' roles (:func:`~construct_eval.paper.figure_data.role`) and the value the order tables call them."""


def order_figures(run_dirs: Sequence[Path], venue: str, column: str, pick: Pick = _every) -> list[PaperFigure]:
    """``order_shift`` (main): does the prompt order sway the judge, on the datasets where the
    judge's rows under both orders mean something (at most :data:`~construct_eval.display.style.MAX_SERIES`
    orders; more, and those too small, in ``appx_order_small``)."""
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
    every = sorted(dict.fromkeys((r["run"], r["variant_b"]) for v in by_value.values() for r in v),
                   key=lambda k: runs.index(k[0]))  # fmt: skip
    main = [k for k in every if k in ok][:MAX_SERIES]
    out = []
    for base, keys, appendix, what in (
        ("order_shift", main, False, "does the prompt order sway the judge"),
        ("appx_order_small", [k for k in every if k not in main], True,
         "prompt order on the datasets too small to mean anything"),
    ):  # fmt: skip
        parts = fd.chunks([f"{k[0]}\t{k[1]}" for k in keys], MAX_SERIES)
        for name, part in zip(_names(base, len(parts)), parts, strict=True):
            if not part:
                continue
            picked = {tuple(p.split("\t")) for p in part}
            mine = {v: [r for r in rows if (r["run"], r["variant_b"]) in picked] for v, rows in by_value.items()}
            style = venue_style(venue, column, ncols=4)
            fig = order_plot.order_figure(mine, style=style, small=appendix)
            sets = list(dict.fromkeys(k[0] for k in keys if f"{k[0]}\t{k[1]}" in part))
            drawn = [(e.dataset, "document", e.scorer) for run, b in sorted(picked)
                     for a in {p[1] for p in pairs if p[0] == run and p[2] == b} for e in judged(run, {a, b})]  # fmt: skip
            # the flat note is of the run's whole detection row, not of the outputs paired: said with its n
            flat = {(e.dataset, _ORDER_VALUE[fd.role(e.scorer)]): f"{e.flat_note} over the run's {e.n:,} outputs"
                    for run, a, _ in pairs for e in judged(run, {a}) if e.flat and fd.role(e.scorer) in _ORDER_VALUE}  # fmt: skip
            out.append(PaperFigure(name, fig, style, what, inputs, appendix, sets, rows=list(dict.fromkeys(drawn)),
                                   message=Caption("") if appendix else messages.order(mine, flat=flat)))  # fmt: skip
    return out
