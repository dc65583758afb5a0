"""A trust policy used as it would be, on the recorded runs (issue 57): fitted on a random half of
a labelled run's documents, applied to the other half as if it had no labels, then checked against
that half's labels. No model calls:

    .venv/bin/python -m construct_eval.studies.policy_split

writes ``metrics/policy_split.csv/.md`` in each run below, one row per scorer
(:func:`construct_eval.decide.policy.split_half`, alpha 5%, delta 10%, seed 0, 999 permutations).
"""

from __future__ import annotations

import sys

from construct_eval.data.runs import RunDir
from construct_eval.decide.policy import split_half
from construct_eval.reports.tables import write_table
from construct_eval.studies import RUNS as ROOT

RUNS = {
    "financial_ner-sample600-controlled30": ("plausibility@leaf", "p-correct@top", "judge-field"),
    "natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package": (
        "plausibility@top", "p-correct@top", "judge-field", "consistency@top", "construct@top",
    ),
}  # fmt: skip
COLUMNS = [
    "scorer", "fit_documents", "threshold", "bound", "calibration", "new_documents", "new_items", "accepted_share",
    "realised", "realised_low", "realised_high", "within_alpha", "above_alpha_beyond_chance", "shift_p",
]  # fmt: skip


def main() -> int:
    for name, scorers in RUNS.items():
        run = RunDir(ROOT / name, create=False)
        rows = []
        for scorer in scorers:
            try:
                rows.append(split_half(run, scorer))
            except ValueError as exc:  # a scorer this run did not score (yet)
                print(f"{name}: {scorer}: {exc}", file=sys.stderr)
        title = (
            f"A policy fitted on half the documents, applied to the other half as if unlabelled ({name}; alpha 5%,"
            " delta 10%; realised: the share of accepted items wrong, 95% document-bootstrap interval)"
        )
        write_table(rows, run.path / "metrics" / "policy_split", title, COLUMNS)
        print(f"{name}: {len(rows)} scorer(s) -> {run.path / 'metrics' / 'policy_split.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
