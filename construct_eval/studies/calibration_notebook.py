"""The tables notebook 03 (calibration) shows, formatted from the reports it computes.

Notebook 03 asks what each rating value means as an error rate. It calibrates the study's run
(:func:`~construct_eval.calibrate_run`) and shows the reports' rows; these functions turn those rows
into the Markdown it shows, so that its cells stay short. Nothing here computes a statistic.

    from construct_eval.studies import calibration_notebook as cn
    cn.readings_table(report)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from construct_eval.display.style import dataset_label
from construct_eval.reports.tables import MIN_DISTINCT_TO_FIT
from construct_eval.scorer_labels import display_name, in_default_order
from construct_eval.stats.calibration import describe_values
from construct_eval.stats.calibrators import calibrator_words
from construct_eval.studies.notebook_figures import notebook_link
from construct_eval.types import ScorerId

FORCED = "grammar:rating-only"
"""How the study's judge was first asked: a score named without "free" had its rating forced alone."""


def fmt(x: Any, digits: int = 3) -> str:
    """A number at ``digits`` decimals; "-" for none or NaN."""
    return "-" if x is None or x != x else f"{float(x):.{digits}f}"


def signed(x: Any, digits: int = 3) -> str:
    """A difference with its sign ("+0.012", "-0.004"); one that rounds to zero is "0.000", whatever
    side of zero it lay on; "-" for none or NaN."""
    if x is None or x != x:
        return "-"
    text = f"{float(x):+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def scorer_of(key: Any) -> ScorerId:
    """A calibration report's key (``"level:scorer"`` or ``(level, scorer)``) as the scorer's identity."""
    if isinstance(key, tuple):
        return ScorerId.parse(key[1])
    level, _, name = str(key).partition(":")
    return ScorerId.parse(name or level)


def default_order(name: str) -> bool:
    """A score asked in the judge's default prompt order (the other orders are notebook 04's question)."""
    return in_default_order(ScorerId.parse(name).variant)


def _values(title: str, rows: Sequence[Mapping[str, Any]], note: str = "") -> str:
    lines = "\n".join(f"- {line}".replace(": 1 items,", ": 1 item,") for line in describe_values(rows))
    return f"**{title}** ({sum(int(r['n']) for r in rows):,} items{note})\n\n{lines}"


def value_readings(report: Mapping[str, Any]) -> str:
    """Each score of the report in the default prompt order, every value it took read in words:
    how many items, how many wrong, the error rate with its interval."""
    parts = []
    for key, rows in report["values"].items():
        sid = scorer_of(key)
        if default_order(sid.name):
            parts.append(_values(display_name(sid, elicitation=FORCED), rows))
    return "\n\n".join(parts)


def written_ratings(report: Mapping[str, Any], run_name: str) -> str:
    """The written ratings of another run, each value in words, under the run's name; a field
    rating says that its items pool filled and empty fields."""
    parts = []
    dataset = "{} ({})".format(*dataset_label(run_name))
    for key, rows in report["values"].items():
        sid = scorer_of(key)
        if sid.is_written_rating:
            pooled = " (fields the output filled and fields it left empty together; the figure above splits them)"
            title = f"{dataset}: {display_name(sid, elicitation=FORCED)}"
            parts.append(_values(title, rows, pooled if sid.level == "field" else ""))
    return "\n\n".join(parts)


def readings_table(report: Mapping[str, Any]) -> str:
    """Each reading of each score as a probability: Brier with its interval, the per-value ECE
    (no interval: a percentile interval of a binned ECE, a biased statistic, can lie wholly above
    its estimate), and the paired Brier differences from the naive reading and the base rate."""

    def diff(r: Mapping[str, Any], key: str, low: str, high: str) -> str:
        return "-" if r.get(key) is None else f"{signed(r[key])} [{signed(r[low])}, {signed(r[high])}]"

    head = "| score | reading | n | Brier [95% CI] | per-value ECE | Brier minus naive [95% CI] | Brier minus base rate [95% CI] |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in (r for r in report["readings"] if default_order(r["scorer"])):
        lines.append(
            f"| {display_name(r['scorer'], elicitation=FORCED)} | {r['reading'].replace('platt', 'Platt')} | "
            f"{int(r['n']):,} | {fmt(r['brier'])} [{fmt(r['brier_low'])}, {fmt(r['brier_high'])}] | "
            f"{fmt(r['ece_per_value'])} | {diff(r, 'brier_minus_naive', 'diff_low', 'diff_high')} | "
            f"{diff(r, 'brier_minus_base_rate', 'base_diff_low', 'base_diff_high')} |"
        )
    return "\n".join(lines)


def _main_score(name: str) -> bool:
    """The judge's scores a reader calibrates: its ratings, expected ratings and P(correct), one per
    elicitation, in the default prompt order, no minima (the full table has every score)."""
    sid = ScorerId.parse(name)
    return (sid.is_judge or sid.family == "p-correct") and default_order(name) and sid.aggregate is None


def calibrators_table(rows: Iterable[Mapping[str, Any]], target_recall: float, full_table: Path, here: Path) -> str:
    """Each of the judge's scores read as P(error) by each map fitted out of fold: Brier, log loss,
    the two ECEs, and the share to review to catch ``target_recall`` of the errors with the recall
    it really reached; then how many rows of the full table (``full_table``, linked from ``here``,
    where the executed notebook lives) are shown and how many maps were not fitted."""
    rows = list(rows)
    shown = [r for r in rows if _main_score(r["scorer"]) and not str(r["method"]).startswith("not fitted")]
    unfitted = [r for r in rows if str(r["method"]).startswith("not fitted")]
    share = f"review share for {target_recall:.0%}"
    head = ["score", "method", "n", "Brier", "log loss", "ECE (width)", "ECE (mass)", share, "recall reached"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in shown:
        recall = r.get("realised_recall")
        reached = "-" if recall in (None, "") else fmt(recall) + (" (short)" if float(recall) < target_recall else "")
        cells = [display_name(r["scorer"], elicitation=FORCED), calibrator_words(r["method"]), f"{int(r['n']):,}",
                 fmt(r.get("brier")), fmt(r.get("log_loss")), fmt(r.get("ece_width")), fmt(r.get("ece_mass")),
                 fmt(r.get(f"review_share_items@{target_recall:.0%}")), reached]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    link = notebook_link(full_table, here)
    missing = [r for r in unfitted if _main_score(r["scorer"])]
    reasons = list(dict.fromkeys(str(r["method"]).removeprefix("not fitted: ") for r in missing))
    absent = (
        f"Not in it, because no map was fitted ({'; '.join(reasons)}: under {MIN_DISTINCT_TO_FIT} values a rating "
        "is read value by value, as above, not fitted with a curve): "
        + "; ".join(f"{display_name(r['scorer'], elicitation=FORCED)} ({int(r['n']):,} items)" for r in missing)
        + ". "
        if missing
        else ""
    )
    return "\n".join(lines) + (
        f"\n\n{absent}The {len(shown)} rows above are the judge's scores, of the {len(rows)} rows of [the full table]({link}), "
        f"which has every score, the label-free checks among them, and says why {len(unfitted)} "
        f"{'was' if len(unfitted) == 1 else 'were'} not fitted. "
        "A Beta map that collapses to a constant shows ECE 0 and a review share of 1: it cannot "
        "order the items, so catching the target share of errors means reviewing them all."
    )
