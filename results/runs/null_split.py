"""Token log-prob AUROC within output kinds: fields the output left null (or empty) vs fields with a value.

    .venv/bin/python results/runs/null_split.py > results/runs/null_split.md

Pooled over both kinds the token log-prob can rank wrong fields *after* right ones (financial
entities: AUROC 0.42) while it ranks them first within each kind: a null written with little
confidence is usually right (the truth is null too), a value written with confidence is often
wrong (invented). The split shows how much of a pooled AUROC is this mix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from construct_eval.analysis.metrics import auroc
from construct_eval.analysis.output_kinds import output_kind
from construct_eval.analysis.tables import markdown_table
from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT, get_at, parse_path


def split_rows(run: RunDir) -> list[dict[str, object]]:
    outputs = {r["id"]: r.get("output") for r in run.iter_rows("outputs")}
    wrong = {(lab["id"], f["path"]): f["wrong"] for lab in run.iter_rows("labels") for f in lab["fields"]}
    kinds: dict[str, tuple[list[bool], list[float]]] = {"all": ([], []), "null or empty": ([], []), "value": ([], [])}
    for r in run.iter_rows("scores"):
        if r["scorer"] != "token_logprob" or r["field"] == DOCUMENT or r.get("granularity") != "leaf":
            continue
        key = (r["id"], r["field"])
        if r.get("score") is None or key not in wrong:
            continue
        value = get_at(outputs.get(r["id"]), parse_path(r["field"]))
        kind = output_kind(value)
        for k in ("all", kind):
            kinds[k][0].append(wrong[key])
            kinds[k][1].append(float(r["score"]))  # a trust score: low = likely wrong
    rows = []
    for kind, (y, s) in kinds.items():
        y_arr, s_arr = np.array(y, dtype=bool), np.array(s)
        ok = len(y) and 0 < y_arr.sum() < len(y)
        rows.append(
            {
                "run": run.path.name,
                "fields": kind,
                "n": len(y),
                "wrong": f"{y_arr.mean():.1%}" if len(y) else "-",
                "token log-prob AUROC": f"{auroc(y_arr, s_arr):.3f}" if ok else "-",
            }
        )
    return rows


def main() -> int:
    root = Path(__file__).resolve().parent
    rows = []
    for path in sorted(root.iterdir()):
        run = RunDir(path, create=False) if (path / "scores.jsonl").exists() else None
        if run is not None and any(r["scorer"] == "token_logprob" for r in run.iter_rows("scores")):
            rows += split_rows(run)
    print(markdown_table(rows, title="Token log-prob AUROC by output kind (leaf fields)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
