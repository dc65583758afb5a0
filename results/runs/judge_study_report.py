"""The judge study's state, from the stored tables of its run (no model calls, no recomputation).

    .venv/bin/python results/runs/judge_study_report.py > results/runs/judge_study.md

Qwen2.5-Coder-1.5B judging 600 financial-entity sentences with planted errors: how far the
runs are against the targets, every scorer against the forced written rating (paired AUROC
difference on the items both scored, Holm across each table; the comparison fixed before
looking), and what each well-populated rating value means. ``analyse_all.sh`` remakes the
tables and this file; ``tests/test_results_scripts.py`` checks that the file is what this prints.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from construct_eval.analysis.calibration import FEW_ITEMS, describe_values

RUN = Path(__file__).resolve().parent / "financial_ner-sample600-controlled30"
TARGETS = {"sentences": 500, "wrong documents": 120, "right documents": 120, "wrong fields": 300}
MIN_ITEMS = FEW_ITEMS  # a rating value with fewer items is listed as too few to read


def _rows(name: str) -> list[dict[str, str]]:
    path = RUN / "metrics" / f"{name}.csv"
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _f(text: str | None) -> float:
    try:
        return float(text) if text not in (None, "") else math.nan
    except ValueError:
        return math.nan


def _ci(value: str, low: str, high: str) -> str:
    v, lo, hi = _f(value), _f(low), _f(high)
    if math.isnan(v):
        return "-"
    return f"{v:.3f}" if math.isnan(lo) else f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def progress(detection: list[dict[str, str]]) -> list[str]:
    by = {(r["level"], r["scorer"]): r for r in detection}
    doc, field = by.get(("document", "judge-doc")), by.get(("field", "judge-field"))
    if not doc or not field:
        return ["The forced-rating runs have no table yet."]
    n_doc, wrong_doc = int(_f(doc["n"])), int(_f(doc["positives"]))
    have = {
        "sentences": n_doc,
        "wrong documents": wrong_doc,
        "right documents": n_doc - wrong_doc,
        "wrong fields": int(_f(field["positives"])),
    }
    lines = ["| target | needed | judged so far | met |", "|---|---|---|---|"]
    for name, need in TARGETS.items():
        lines.append(f"| {name} | {need} | {have[name]} | {'yes' if have[name] >= need else 'not yet'} |")
    return lines


def comparison(level: str, detection: list[dict[str, str]], reference: str) -> list[str]:
    paired = {r["a"]: r for r in _rows(f"paired_{level}_{reference}")}
    lines = [
        "| scorer | n | wrong | AUROC [95%] | rating use | minus the forced rating [95%] | Holm p | the interval allows |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in (r for r in detection if r["level"] == level):
        name = r["scorer"] + (" (uses labels)" if r.get("uses_labels", "").lower() == "true" else "")
        p = paired.get(r["scorer"])
        if r["scorer"] == reference:
            diff, holm, allows = "(reference)", "", ""
        elif p and p.get("difference"):
            p_holm = _f(p["p_holm"])
            holm = "< 0.0005" if p_holm == 0 else f"{p_holm:.3g}"  # 0 of 2000 paired resamples crossed zero
            diff = _ci(p["difference"], p["low"], p["high"])
            allows = p["ranking"]
        else:
            diff, holm, allows = "-", "", "not paired"
        weak = " (underpowered)" if r.get("underpowered") else ""
        lines.append(
            f"| `{name}` | {r['n']} | {r['positives']} | {_ci(r['auroc'], r['auroc_low'], r['auroc_high'])}{weak}"
            f" | {r.get('rating_use') or ''} | {diff} | {holm} | {allows} |"
        )
    return lines


def meanings(name: str, what: str) -> list[str]:
    rows = _rows(name)
    return [f"{what}:", *(f"- {line}" for line in describe_values(rows, MIN_ITEMS))] if rows else []


def main() -> None:
    detection = _rows("detection")
    out = [
        "# The judge study: Qwen2.5-Coder-1.5B as judge, rating forced (in progress)",
        "",
        f"From the stored tables of [`{RUN.name}`]({RUN.name}/metrics/detection.md) (600 sentences,",
        "planted errors in 177, 339 wrong fields); printed by `judge_study_report.py`. The run is being",
        "judged document by document: every number below is for the documents judged so far, with its n.",
        "",
        "## Progress against the targets",
        "",
        *progress(detection),
        "",
        "## Every scorer against the forced rating",
        "",
        "Paired AUROC difference on the items both scored (document bootstrap), Holm across each table;",
        "an AUROC below 0.5 ranks wrong items as *more* trustworthy.",
        "",
        "Documents:",
        "",
        *comparison("document", detection, "judge-doc"),
        "",
        "Fields:",
        "",
        *comparison("field", detection, "judge-field"),
        "",
        "## What each rating value means",
        "",
        *meanings("values_document_judge-doc", "The document rating"),
        "",
        *meanings("values_field_judge-field", "The field rating"),
    ]
    print("\n".join(out))


if __name__ == "__main__":
    main()
