"""What the generators' real errors are, run by run: which fields they fall on and whether one
field's omission decides a document's label (issue 35's natural-error study).

    .venv/bin/python results/runs/natural_error_patterns.py [RUNS_FOLDER] > natural_error_patterns.md

For every ``natural-*`` run folder with labels: its documents and wrong documents, then for each of
the fields wrong most often (list positions dropped from the path) how many documents have it wrong,
in how many of those it is the only wrong field, and how its truth splits the documents: wrong
where the truth has a value against where the truth is null (from the label's reason: a null
truth reads ``both_null`` or ``invented_value``). A field wrong in every document whose truth has
a value and in none where it is null decides the label by whether the document gives that value:
any score that notices the document naming it finds those errors, whatever else it knows.
Nothing is computed here that ``construct-eval label`` did not record.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

from construct_eval.analysis.collect import field_key
from construct_eval.analysis.tables import markdown_table
from construct_eval.data.runs import RunDir

NULL_TRUTH = {"both_null", "invented_value"}
TOP_FIELDS = 3


def field_rows(path: Path) -> list[dict[str, object]]:
    """One row per field among the run's most often wrong ones."""
    run = RunDir(path, create=False)
    labels = [r for r in run.iter_rows("labels") if not r.get("parse_failed")]
    wrong_docs = sum(bool(r["wrong"]) for r in labels)
    wrong_in: Counter[str] = Counter()
    only: Counter[str] = Counter()
    split: dict[str, Counter[tuple[bool, bool]]] = defaultdict(Counter)  # (truth has a value, wrong)
    for r in labels:
        wrong_here = {field_key(f["path"]) for f in r["fields"] if f["wrong"]}
        for key in wrong_here:
            wrong_in[key] += 1
        if len(wrong_here) == 1:
            only[next(iter(wrong_here))] += 1
        seen: dict[str, tuple[bool, bool]] = {}
        for f in r["fields"]:  # a document counts once per field key (list items pooled: any wrong)
            key = field_key(f["path"])
            has, bad = seen.get(key, (False, False))
            seen[key] = (has or f["reason"] not in NULL_TRUTH, bad or bool(f["wrong"]))
        for key, cell in seen.items():
            split[key][cell] += 1
    rows = []
    for key, n in sorted(wrong_in.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_FIELDS]:  # ties by name
        s = split[key]
        valued, null = s[True, True] + s[True, False], s[False, True] + s[False, False]
        rows.append(
            {
                "run": f"`{path.name}`",
                "documents (wrong)": f"{len(labels)} ({wrong_docs})",
                "field": f"`{key}`",
                "documents with it wrong": f"{n} ({n / wrong_docs:.0%} of the wrong)" if wrong_docs else str(n),
                "its only wrong field": only[key],
                "wrong where the truth has a value": f"{s[True, True]} of {valued}",
                "wrong where the truth is null": f"{s[False, True]} of {null}",
            }
        )
    return rows


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    runs = sorted(p for p in root.glob("natural-*") if (p / "labels.jsonl").is_file())
    rows = [row for p in runs for row in field_rows(p)]
    print("# What the generators' real errors are\n")
    print(f"From the labels of the run folders under `results/runs` (`results/runs/{Path(__file__).name}`):")
    print(f"each run's {TOP_FIELDS} fields wrong in the most documents (list positions pooled). A field wrong in")
    print("every document whose truth gives a value and in none where it is null decides the label by")
    print("whether the document gives that value.\n")
    print(markdown_table(rows), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
