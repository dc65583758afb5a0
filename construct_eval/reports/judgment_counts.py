"""What a run's judgments hold, counted: per mode how many were scored and unscored, the
histogram of the ratings given, and why the unscored ones were not read (``summary``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from construct_eval.data.runs import RunDir
from construct_eval.judging.reread import judgment_rows, rule_counts
from construct_eval.kinds import JudgeMode
from construct_eval.reports.run_memo import memo_rows_by_run_files


@dataclass
class JudgmentCounts:
    """Counts over every row of a run's ``judgments.jsonl`` (all configurations)."""

    file: Path
    rows: int = 0
    by_mode: Counter[tuple[str, str]] = field(default_factory=Counter)  # (mode, status) -> rows
    ratings: Counter[tuple[str, int]] = field(default_factory=Counter)  # (mode, rating) -> scored rows
    reasons: Counter[str] = field(default_factory=Counter)  # unscored reason -> rows

    def lines(self) -> list[str]:
        out = [f"{self.rows} judgments in {self.file}"]
        for mode in JudgeMode:
            ok, un = self.by_mode[(mode.value, "ok")], self.by_mode[(mode.value, "unscored")]
            if ok + un:
                hist = " ".join(
                    f"{v}:{self.ratings[(mode.value, v)]}" for v in range(1, 11) if self.ratings[(mode.value, v)]
                )
                out.append(
                    f"  {mode.value:13s} scored {ok:6d}  unscored {un:6d} ({un / (ok + un):.1%})  ratings {hist}"
                )
        out += [f"  unscored {reason}: {n}" for reason, n in self.reasons.most_common()]
        return out


def judgment_counts(run: RunDir) -> JudgmentCounts:
    """Count the judgments of ``run`` by mode, status, rating and unscored reason."""
    counts = JudgmentCounts(run.file("judgments"))
    for r in judgment_rows(run):  # stored replies read again with today's parser (judging.reread)
        counts.rows += 1
        counts.by_mode[(r["mode"], r["status"])] += 1
        if r["status"] != "ok":
            counts.reasons[r["reason"]] += 1
        else:
            counts.ratings[(r["mode"], r["rating"])] += 1
    return counts


@memo_rows_by_run_files("judgments")  # one re-reading per file contents, kept beside the run
def parse_rule_rows(run: RunDir) -> list[dict[str, object]]:
    """Which parsing rule read the judgments' ratings (issue 34), per mode and constraint, from
    :func:`~construct_eval.judging.reread.rule_counts`: ``rule`` ``unscored`` counts the rows no
    rule could read, and ``readings_changed`` the rows of the group whose reading today's parser
    moved from the stored one. Empty without judgments."""
    if not run.file("judgments").exists():
        return []
    counts = rule_counts(judgment_rows(run))
    rows: list[dict[str, object]] = []
    groups = sorted({(m, c) for m, c, _ in counts}, key="|".join)  # the table's row order, as recorded
    for mode, constrained in groups:
        rules = {rule: n for (m, c, rule), n in counts.items() if (m, c) == (mode, constrained) and rule != "changed"}
        total = sum(rules.values())
        rows += [
            {
                "mode": mode,
                "constrained": constrained,
                "rule": rule,
                "judgments": n,
                "of": total,
                "readings_changed": counts[(mode, constrained, "changed")],
            }
            for rule, n in sorted(rules.items())
        ]
    return rows
