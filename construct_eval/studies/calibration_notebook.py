"""The tables notebook 03 (calibration) shows, formatted from the reports it computes.

Notebook 03 asks what each rating value means as an error rate. It calibrates the study's run
(:func:`~construct_eval.calibrate_run`) and shows the reports' rows; these functions turn those rows
into the Markdown it shows, so that its cells stay short. Nothing here computes a statistic.

    from construct_eval.studies import calibration_notebook as cn
    cn.readings_table(report)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from construct_eval.display.style import dataset_label
from construct_eval.reports.tables import MIN_DISTINCT_TO_FIT
from construct_eval.scorer_labels import display_name, in_default_order
from construct_eval.stats.calibration import describe_values
from construct_eval.stats.calibrators import calibrator_words
from construct_eval.studies.notebook_figures import notebook_link
from construct_eval.studies.notebook_words import say
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


def _say(sentence: str, /, *args: Any, **facts: Any) -> str:
    """A sentence of ``templates/calibration_notebook.md.j2``."""
    return say("calibration_notebook", sentence, *args, **facts)


def _values(title: str, rows: Sequence[Mapping[str, Any]], pooled: bool = False) -> str:
    lines = "\n".join(f"- {line}".replace(": 1 items,", ": 1 item,") for line in describe_values(rows))
    return _say("values_heading", title, sum(int(r["n"]) for r in rows), pooled) + f"\n\n{lines}"


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
            title = f"{dataset}: {display_name(sid, elicitation=FORCED)}"
            parts.append(_values(title, rows, pooled=sid.level == "field"))
    return "\n\n".join(parts)


def readings_table(report: Mapping[str, Any]) -> str:
    """Each reading of each score as a probability: Brier with its interval, the per-value ECE
    (no interval: a percentile interval of a binned ECE, a biased statistic, can lie wholly above
    its estimate), and the paired Brier differences from the naive reading and the base rate."""

    def diff(r: Mapping[str, Any], key: str, low: str, high: str) -> str:
        if r.get(key) in (None, ""):
            return "-"
        d = digits(r[low], r[high])
        return f"{signed(r[key], d)} [{signed(r[low], d)}, {signed(r[high], d)}]"

    head = "| score | reading | n | Brier [95% CI] | per-value ECE | Brier minus naive [95% CI] | Brier minus base rate [95% CI] |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in (r for r in report["readings"] if default_order(r["scorer"])):
        lines.append(
            f"| {display_name(r['scorer'], elicitation=FORCED)} | {r['reading'].replace('platt', 'Platt')} | "
            f"{int(r['n']):,} | {fmt(r['brier'])} [{fmt(r['brier_low'])}, {fmt(r['brier_high'])}] | "
            f"{fmt(r['ece_per_value'])} | {diff(r, 'brier_minus_naive', 'diff_low', 'diff_high')} | "
            f"{diff(r, 'brier_minus_base_rate', 'base_diff_low', 'base_diff_high')} |"
        )
    return "\n".join(lines) + _few_values_note(report)


def digits(low: Any, high: Any) -> int:
    """Decimals for a difference's interval: 3, or 4 where 3 would round an interval that excludes 0
    onto it (-0.0019 to -0.0003 prints as -0.002 to 0.000), the rule the findings quote it by."""
    lo, hi = float(low), float(high)
    return 4 if (hi < 0 or lo > 0) and min(abs(lo), abs(hi)) < 0.0005 else 3


def _unfitted(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """(level, scorer) -> how many values, for each score the calibration table fitted no map to
    because it takes too few values ("not fitted: 3 distinct scores" -> "3")."""
    out = {}
    for r in rows:
        found = re.fullmatch(r"not fitted: (\d+) distinct scores", str(r["method"]))
        if found:
            out[(str(r.get("level", "")), str(r["scorer"]))] = found[1]
    return out


def _few_values_note(report: Mapping[str, Any]) -> str:
    """Under the readings table: the ratings in it that the calibrators table fits no map to (too few
    values), so that the two tables say the same thing about them."""
    few = _unfitted(report.get("rows") or [])
    named = list(dict.fromkeys(
        f"{display_name(r['scorer'], elicitation=FORCED)} ({few[(r['level'], r['scorer'])]} values)"
        for r in report["readings"] if default_order(r["scorer"]) and (r["level"], r["scorer"]) in few
    ))  # fmt: skip
    return "\n\n" + _say("few_values", MIN_DISTINCT_TO_FIT, named) if named else ""


BULLETS = (
    ("What each value means.", ("Per field,", "They are out of order")),
    ("Filled fields alone.", ("Within the filled fields",)),
    ("Read as a probability.", ("Read naively", "Fitted out of fold")),
    ("Monotone maps.", ("Isotonic regression", "Platt scaling", "A monotone map")),
    ("Without an order.", ("Read value by value", "On the expected rating")),
)
"""The rating finding's sentences as the notebook groups them: a bullet's head and how its sentences
open, in the order they are said (the reading value by value, whose "it" is the rating, before the
expected rating). A sentence that opens otherwise follows the one before it, so a reworded finding
loses nothing."""


def finding_bullets(finding: Any, strip: str = "", prefix: str = "") -> str:
    """A finding (:class:`~construct_eval.studies.findings.Finding`) as its answer in bold, then its
    sentences in a few short bullets (:data:`BULLETS`) and the tables it cites; every sentence of
    its body is kept, in the order of :data:`BULLETS`, and none is reworded."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", finding.body.strip())
    groups: dict[str, list[tuple[int, int, str]]] = {head: [] for head, _ in BULLETS}
    head, at = BULLETS[0][0], 0
    for i, sentence in enumerate(sentences):
        for h, opens in BULLETS:
            hit = next((k for k, o in enumerate(opens) if sentence.startswith(o)), None)
            if hit is not None:
                head, at = h, hit
                break
        groups[head].append((at, i, sentence))
    bullets = [f"- **{h}** {' '.join(t for *_, t in sorted(said))}" for h, said in groups.items() if said]
    cites = ", ".join(f"[{label}]({prefix}{path.removeprefix(strip)})" for label, path in finding.links)
    return f"**{finding.title}**\n\n" + "\n".join(bullets) + f"\n\nTables: {cites}."


def _main_score(name: str) -> bool:
    """The judge's scores a reader calibrates: its ratings, expected ratings and P(correct), one per
    elicitation, in the default prompt order, no minima (the full table has every score)."""
    sid = ScorerId.parse(name)
    return (sid.is_judge or sid.family == "p-correct") and default_order(name) and sid.aggregate is None


def calibrators_table(
    rows: Iterable[Mapping[str, Any]],
    target_recall: float,
    full_table: Path,
    here: Path,
    readings: Iterable[Mapping[str, Any]] = (),
) -> str:
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
    few = _unfitted(missing)
    read = {(str(r["level"]), str(r["scorer"])) for r in readings if "out of fold" in str(r["reading"])}
    absent = ""
    if missing:
        listed = [
            _say("item_count", display_name(r["scorer"], elicitation=FORCED), r["n"],
                 few.get((str(r.get("level", "")), str(r["scorer"])), ""))
            for r in missing
        ]  # fmt: skip
        fitted_above = [r for r in missing if (str(r.get("level", "")), str(r["scorer"])) in read]
        fitted: str | list[str] = (
            "" if not fitted_above
            else "one" if len(fitted_above) == len(missing) == 1
            else "all" if len(fitted_above) == len(missing)
            else [display_name(r["scorer"], elicitation=FORCED) for r in fitted_above]
        )  # fmt: skip
        absent = _say("not_in_table", listed, MIN_DISTINCT_TO_FIT, fitted)
    return "\n".join(lines) + "\n\n" + _say("calibrators_rest", absent, len(shown), len(rows), link, len(unfitted))
