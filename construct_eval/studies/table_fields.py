"""The fourth dataset's rebuild, field by field: where the judge's rating and the other scores
vary, and how well they find the wrong values of each top-level field.

    .venv/bin/python -m construct_eval.studies.table_fields [RUN_FOLDER] [OUT_STEM]

Pooled over the eight top-level fields, a score's AUROC mixes fields that differ in how often
they are wrong and in whether the score varies on them at all: a rating that is 10 on every
count and identifier can still rank the per-column dictionaries, and a pooled or "within filled
fields" AUROC does not say which. Here each field gets its own row per score: its items, how many
are wrong, in how many tables, how the score spreads ("constant" for one value; a judge's rating
as ``rating_use`` reads it), and its AUROC with a 95% table-bootstrap interval, marked where it is
underpowered (:meth:`construct_eval.stats.metrics.DetectionSummary.power_note`). The items and
labels are the run's, collected as ``evaluate`` collects them; nothing else is computed here.
Writes ``OUT_STEM.csv`` and ``OUT_STEM.md`` (default: ``table_fields`` beside this script).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from construct_eval.data.runs import RunDir
from construct_eval.kinds import Level
from construct_eval.reports.collect import collect
from construct_eval.reports.tables import RatingUse, is_rating, markdown_table, rating_use
from construct_eval.stats.metrics import detection_summary
from construct_eval.studies import RUNS

RUN = RUNS / "natural-data_table_rebuild-qwen2.5-coder-1.5b-benchmark"
SCORERS = ("judge-field", "judge-field:expected", "token_logprob@top", "plausibility@top")
N_BOOT = 1000


def spread(scorer: str, scores: np.ndarray) -> str:
    """How a score spreads over a field's items: one value is "constant"; a rating reads as
    ``rating_use``; any other score by its count of distinct values."""
    distinct = len(np.unique(scores))
    if distinct == 1:
        return "constant"
    return rating_use(scores.tolist()) if is_rating(scorer) else f"{distinct} values"


def field_rows(run_dir: Path) -> list[dict[str, object]]:
    """One row per (top-level field, score) of :data:`SCORERS`, fields in the schema's order."""
    run = RunDir(run_dir, create=False)
    items = {str(it.scorer): it for it in collect(run) if it.level is Level.FIELD}
    order = list((run.schema() or {}).get("properties", {}))
    rows = []
    for key in order:
        for name in SCORERS:
            it = items.get(name)
            if it is None:
                continue
            mask = np.array([f == key for f in it.fields])
            if not mask.any():
                continue
            wrong = np.asarray(it.wrong)[mask]
            scores = np.asarray(it.scores, dtype=float)[mask]
            docs = np.asarray(it.doc_ids)[mask]
            row: dict[str, object] = {
                "field": key,
                "scorer": name,
                "n": int(mask.sum()),
                "wrong": int(wrong.sum()),
                "documents": len(set(docs.tolist())),
                "spread": spread(name, scores),
            }
            if 0 < wrong.sum() < len(wrong):
                s = detection_summary(wrong, scores, docs, n_boot=N_BOOT, seed=0)
                hide = s.hides_intervals
                row.update(
                    auroc=round(s.auroc.estimate, 4),
                    auroc_low="" if hide else round(s.auroc.low, 4),
                    auroc_high="" if hide else round(s.auroc.high, 4),
                    underpowered=s.power_note(),
                )
            else:
                row.update(auroc="", auroc_low="", auroc_high="", underpowered="one class only: no AUROC")
            rows.append(row)
    return rows


def _spread_words(spread_text: str) -> str:
    """A stored spread as a reader reads it: ``flat (1:52% 10:48%)`` -> "split between two values
    (1 for 52%, 10 for 48%)" (:meth:`RatingUse.described`); other spreads as they are."""
    if spread_text.startswith(("flat (", "varying (")):
        return RatingUse.parse(spread_text).described()  # type: ignore[union-attr]
    return spread_text


def main(argv: list[str]) -> int:
    run_dir = Path(argv[1]) if len(argv) > 1 else RUN
    stem = Path(argv[2]) if len(argv) > 2 else RUNS / "table_fields"
    rows = field_rows(run_dir)
    with stem.with_suffix(".csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    shown = [
        {
            **{k: v for k, v in r.items() if k not in ("auroc_low", "auroc_high")},
            "spread": _spread_words(str(r["spread"])),
            "auroc": f"{r['auroc']:.3f} [{r['auroc_low']:.3f}, {r['auroc_high']:.3f}]"
            if r["auroc_low"] != ""
            else (f"{r['auroc']:.3f}" if r["auroc"] != "" else "-"),
        }
        for r in rows
    ]
    text = [
        f"# {run_dir.name}: each top-level field apart",
        "",
        f"From the run's stored judgments, scores and labels (`construct_eval/studies/{Path(__file__).name}`); AUROC with a",
        f'95% interval over {N_BOOT} table resamples; "constant": the score has one value on the field, so its',
        "AUROC is 0.5 by construction and ranks nothing.",
        "",
        markdown_table(shown),
    ]
    stem.with_suffix(".md").write_text("\n".join(text))
    print(f"wrote {stem.with_suffix('.csv')} and {stem.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
