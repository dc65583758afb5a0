"""Field-level AUROC within output kinds, across the recorded runs: fields the output left null
(or empty) vs fields with a value, from each run's stored ``metrics/detection_by_output_kind.csv``
(written by ``construct-eval evaluate``; no recomputation here).

    .venv/bin/python -m construct_eval.studies.null_split > results/runs/null_split.md

Pooled over both kinds a score can rank wrong fields *after* right ones while it ranks them
first within each kind. The generator's token log-probs: a null written with little confidence
is usually right (the truth is null too), a value written with confidence is often wrong
(invented); the 1.5B judge's field rating: it rates empty entity lists 1, and most of them are
right. The split shows how much of a pooled AUROC is this mix.
"""

from __future__ import annotations

from construct_eval.csv_tables import read_rows
from construct_eval.numbers import interval
from construct_eval.reports.tables import markdown_table
from construct_eval.studies import RUNS, is_copy

SCORERS = ("token_logprob@leaf", "judge-field", "judge-field:expected")


def _ci(row: dict[str, str]) -> str:
    if not row.get("auroc"):
        return row.get("note") or "-"
    return interval(float(row["auroc"]), float(row["auroc_low"]), float(row["auroc_high"]))


def main() -> int:
    root = RUNS
    rows = []
    for path in sorted(root.glob("*/metrics/detection_by_output_kind.csv")):
        if is_copy(path.parents[1]):
            continue  # a judge-swap copy of another run's outputs: its generator's scores are its source's
        for r in read_rows(path):
            if r["scorer"] in SCORERS:
                rows.append(
                    {
                        "run": path.parents[1].name,
                        "scorer": r["scorer"],
                        "fields": r["fields"],
                        "n": r["n"],
                        "wrong": f"{float(r['prevalence']):.1%}",
                        "AUROC [95%]": _ci(r),
                    }
                )
    print(markdown_table(rows, title="Field AUROC by output kind (document-bootstrap intervals)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
