"""The tables notebook 04 (positional bias) shows, formatted from the bias reports it computes.

Notebook 04 asks whether the order of the prompt sways the judge. It pairs each order with the
default on the same outputs (:func:`~construct_eval.bias_run`); these functions turn the reports'
pair rows into the Markdown it shows, so its cells stay short. Nothing here computes a statistic.

    from construct_eval.studies import positional_notebook as pn
    pn.pairs_table(report["pairs"], "rating")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from construct_eval.reports.tables import RatingUse
from construct_eval.scorer_labels import elicitation_label, variant_label
from construct_eval.studies.calibration_notebook import fmt
from construct_eval.studies.notebook_words import say


def _say(sentence: str, /, *args: Any, **facts: Any) -> str:
    """A sentence of ``templates/positional_notebook.md.j2``."""
    return say("positional_notebook", sentence, *args, **facts)


def _shift(r: Mapping[str, Any]) -> str:
    """A pair's mean shift with its interval: ``+0.123 [0.050, 0.200]``."""
    return f"{r['mean_shift']:+.3f} [{fmt(r['shift_low'])}, {fmt(r['shift_high'])}]"


def fmt_p(p: Any) -> str:
    """A p-value at four decimals, "< 0.0001" below that; "-" for none or NaN."""
    return "-" if p is None or p != p else ("< 0.0001" if p < 0.0001 else f"{p:.4f}")


def pairs_table(rows: Sequence[Mapping[str, Any]], value: str) -> str:
    """Each order against the default on the same outputs: the mean shift with its interval,
    Wilcoxon's p after Holm, for the written rating the share changed and the weighted kappa, the
    wrong outputs and the AUROC difference (underpowered, with its counts, where a class is small)."""
    head = ["order", "n", "shift, rating points [95% CI]", "Wilcoxon p (Holm)"]
    head += ["ratings changed", "weighted kappa"] if value == "rating" else []
    head += ["wrong", "AUROC difference [95% CI]"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [variant_label(r["variant_b"]), str(r["n"]),
                 f"{r['mean_shift']:+.3f} [{fmt(r['shift_low'])}, {fmt(r['shift_high'])}]",
                 fmt_p(r["wilcoxon_p_holm"])]  # fmt: skip
        if value == "rating":
            cells += [f"{r['share_changed']:.1%}", fmt(r["weighted_kappa"])]  # a share in %, as the prose gives it
        cells.append(str(r.get("wrong", "-")))
        if r.get("auroc_diff") is None:
            cells.append("-")
        elif r.get("auroc_underpowered"):  # too few wrong or right documents to read a difference
            cells.append(f"underpowered ({r['auroc_underpowered']})")
        else:
            cells.append(f"{r['auroc_diff']:+.3f} [{fmt(r['auroc_diff_low'])}, {fmt(r['auroc_diff_high'])}]")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def study_pairs(reports: Mapping[str, Mapping[str, Any]]) -> str:
    """The study's two tables (written rating, expected rating), then where each order's mean
    shift of the written rating comes from: the outputs whose rating changes, and by how much."""
    parts = []
    for value, title in (("rating", "Written rating"), ("expected_rating", "Expected rating")):
        report = reports[value]
        heading = _say("pairs_heading", title, len(report["paired"].items))
        parts.append(f"{heading}\n\n" + pairs_table(report["pairs"], value))
    moved = [r for r in reports["rating"]["pairs"] if r["share_changed"]]
    parts.append(" ".join(
        _say("shift_source", variant_label(r["variant_b"]), f"{r['mean_shift']:+.3f}",
             round(r["share_changed"] * r["n"]), r["n"], f"{r['share_changed']:.1%}",
             f"{r['mean_shift'] / r['share_changed']:+.1f}")
        for r in moved
    ))  # fmt: skip
    return "\n\n".join(p for p in parts if p)


def _side(r: Mapping[str, Any]) -> int:
    """+1 where a pair's shift interval lies above 0, -1 below, 0 where it holds 0."""
    return 1 if r["shift_low"] > 0 else -1 if r["shift_high"] < 0 else 0


def direction_against(rows: Sequence[Mapping[str, Any]], study: Sequence[Mapping[str, Any]]) -> str:
    """Where a small run's order moves the rating the other way from the same order in the study
    (both intervals excluding 0, signs opposite), a sentence saying so with both shifts: the
    direction an order pushes a rating is then not a property of the order alone. "" where no
    order does. Said of this run only: one small run shows that the direction can differ, not what
    it depends on."""
    by_order = {r["variant_b"]: r for r in study}
    said = []
    for r in rows:
        other = by_order.get(r["variant_b"])
        if other is None or _side(r) * _side(other) != -1:
            continue
        here, study_pair = (
            {"side": "up" if _side(x) > 0 else "down", "shift": _shift(x), "n": x["n"]} for x in (r, other)
        )
        said.append(_say("against", variant_label(r["variant_b"]), here, study_pair))
    return _say("other_way", said) if said else ""


def _use_words(use: str) -> str:
    """A stored rating use as a reader reads it: ``flat (5:96%)`` -> ``flat (5 for 96%)``."""
    return RatingUse.parse(use).described()


def way_of_asking(pair: Mapping[str, Any]) -> str:
    """How far asking freely instead of forcing the rating moves it on the same outputs, with the
    two ways' use of the scale and their AUROCs."""
    r = pair
    return _say(
        "way_of_asking", r["n"], _shift(r), f"{100 * r['share_changed']:.1f}%", fmt(r["weighted_kappa"]),
        elicitation_label(r["variant_a"]), _use_words(r["use_a"]), elicitation_label(r["variant_b"]),
        _use_words(r["use_b"]), fmt(r["auroc_a"]), fmt(r["auroc_b"]),
        f"{r['auroc_diff']:+.3f} [{fmt(r['auroc_diff_low'])}, {fmt(r['auroc_diff_high'])}]",
    )  # fmt: skip
