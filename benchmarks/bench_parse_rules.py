"""``evaluate``'s parse-rule table (``metrics/parse_rules``): every stored reply re-read with
today's parser (the first ``evaluate`` on a run, and every one before issue 32's change) against
the table kept beside the run (every later ``evaluate`` while ``judgments.jsonl`` is unchanged),
in one process on the same judgments: seconds each, the ratio, and whether the rows are identical.

The judgments are the main study's (``financial_ner-sample600-controlled30``, 5,800 rows),
repeated to the sizes asked (keys repeat too: the table counts rows, so that does not matter).

    PYTHONPATH=. python benchmarks/bench_parse_rules.py [--rows 58000,290000,1160000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from construct_eval.data.runs import RunDir
from construct_eval.reports import judgment_counts

MAIN = Path(__file__).resolve().parents[1] / "results" / "runs" / "financial_ner-sample600-controlled30"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="58000,290000,1160000", help="judgment rows, comma-separated")
    args = parser.parse_args()
    stored = (MAIN / "judgments.jsonl").read_text().splitlines(keepends=True)
    print(f"{'rows':>10} | {'re-read s':>9} {'kept s':>7} {'ratio':>7} | identical")
    for n in (int(x) for x in args.rows.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            run = RunDir(Path(tmp) / "run")
            with run.file("judgments").open("w") as fh:
                for i in range(n):
                    fh.write(stored[i % len(stored)])
            os.environ["CONSTRUCT_EVAL_COLLECT_CACHE"] = "0"
            t0 = time.perf_counter()
            reread = judgment_counts.parse_rule_rows(run)
            t_reread = time.perf_counter() - t0
            os.environ["CONSTRUCT_EVAL_COLLECT_CACHE"] = "1"
            judgment_counts.parse_rule_rows(run)  # counts once and keeps the table
            t0 = time.perf_counter()
            kept = judgment_counts.parse_rule_rows(run)
            t_kept = time.perf_counter() - t0
        print(f"{n:>10,} | {t_reread:>9.2f} {t_kept:>7.3f} {t_reread / t_kept:>6.0f}x | {kept == reread}")


if __name__ == "__main__":
    main()
