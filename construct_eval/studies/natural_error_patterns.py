"""What the generators' real errors are, run by run: which fields they fall on and whether one
field's omission decides a document's label (issue 35's natural-error study).

    .venv/bin/python -m construct_eval.studies.natural_error_patterns [RUNS_FOLDER] > natural_error_patterns.md

For every ``natural-*`` run folder with labels, over its parsed documents: for each of the (up to)
three fields wrong in the most documents (list positions dropped from the path and pooled: a
document counts once per field, wrong if any position is), how many documents have it wrong, in
how many of those it is the only wrong field, and how its truth splits the documents that label
it: wrong where the truth has a value against where the truth is null (from the label's reason,
:data:`construct_eval.data.labels.NULL_TRUTH_REASONS`). A field wrong in every document whose
truth has a value, in none whose truth is null, and the only wrong field in nearly all of them
makes a document's label the same as "its truth has this value": any score that notices the
document giving that value finds those errors, whatever else it knows.
Nothing is computed here that ``construct-eval label`` did not record.

For a run of the second version of the synthetic shipping notices (``shipping_notice_v2``, which
names the destination's contact in one of five ways), a second table splits the notices by that
phrasing (read back from each notice's text by :func:`construct_eval.data.datasets.synthetic.
contact_phrasing`): how often the contact, and the notice, is wrong under each.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

from construct_eval.data.datasets.synthetic import CONTACT_PHRASINGS, contact_phrasing
from construct_eval.data.labels import NULL_TRUTH_REASONS
from construct_eval.data.runs import RunDir
from construct_eval.reports.collect import field_key
from construct_eval.reports.tables import markdown_table
from construct_eval.studies import RUNS, is_copy

TOP_FIELDS = 3


def field_rows(path: Path) -> list[dict[str, object]]:
    """One row per field among the run's most often wrong ones (ties cut by the field's name)."""
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
        for f in r["fields"]:
            key = field_key(f["path"])
            has, bad = seen.get(key, (False, False))
            seen[key] = (has or f["reason"] not in NULL_TRUTH_REASONS, bad or bool(f["wrong"]))
        for key, cell in seen.items():
            split[key][cell] += 1
    ranked = sorted(wrong_in.items(), key=lambda kv: (-kv[1], kv[0]))
    rows = []
    for key, n in ranked[:TOP_FIELDS]:
        s = split[key]
        valued, null = s[True, True] + s[True, False], s[False, True] + s[False, False]
        share = "" if wrong_docs == len(labels) else f" ({n / wrong_docs:.0%} of the wrong)"
        rows.append(
            {
                "run": f"`{path.name}`",
                "parsed documents": len(labels),
                "wrong documents": wrong_docs,
                "field": f"`{key}`",
                "wrong documents with it wrong": f"{n}{share}",
                "... where it is the only wrong field": only[key],
                "wrong / labelled with a non-null truth": f"{s[True, True]} / {valued}",
                "wrong / labelled with a null truth": f"{s[False, True]} / {null}",
            }
        )
    tied = [k for k, c in ranked[TOP_FIELDS:] if rows and c == ranked[TOP_FIELDS - 1][1]]
    if tied:
        rows[-1]["field"] += f" (tied with {', '.join(f'`{k}`' for k in tied)})"
    return rows


CONTACT = "destination.contact"
NO_CONTACT = "no contact (a greeting that names nobody)"


def phrasing_rows(path: Path) -> list[dict[str, object]]:
    """One row per phrasing of the contact (and one for notices without a contact) in a run of
    ``shipping_notice_v2``; none for any other run."""
    run = RunDir(path, create=False)
    labels = [r for r in run.iter_rows("labels") if not r.get("parse_failed")]
    if not any(r["id"].startswith("synthetic-shipping_notice_v2-") for r in labels):
        return []
    records = {r["id"]: r for r in run.records()}
    notices: Counter[str] = Counter()
    contact_wrong: Counter[str] = Counter()
    doc_wrong: Counter[str] = Counter()
    for r in labels:
        rec = records[r["id"]]
        phrasing = contact_phrasing(rec["request"], rec["ground_truth"]["destination"]["contact"]) or NO_CONTACT
        notices[phrasing] += 1
        contact_wrong[phrasing] += any(f["wrong"] for f in r["fields"] if field_key(f["path"]) == CONTACT)
        doc_wrong[phrasing] += bool(r["wrong"])
    return [
        {
            "run": f"`{path.name}`",
            "how the notice names the contact": f"`{phrasing}`" if phrasing != NO_CONTACT else phrasing,
            "parsed notices": notices[phrasing],
            f"`{CONTACT}` wrong": f"{contact_wrong[phrasing]} ({contact_wrong[phrasing] / notices[phrasing]:.0%})",
            "notice wrong": f"{doc_wrong[phrasing]} ({doc_wrong[phrasing] / notices[phrasing]:.0%})",
        }
        for phrasing in (*CONTACT_PHRASINGS, NO_CONTACT)
        if notices[phrasing]
    ]


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else RUNS
    runs = sorted(p for p in root.glob("natural-*") if (p / "labels.jsonl").is_file() and not is_copy(p))
    rows = [row for p in runs for row in field_rows(p)]
    print("# What the generators' real errors are\n")
    print(
        f"From the labels of the run folders under `results/runs` (`construct_eval/studies/{Path(__file__).name}`), their"
    )
    print(f"parsed documents as labelled so far: each run's (up to) {TOP_FIELDS} fields wrong in the most documents.")
    print("A list's positions are pooled: a document counts once per field, wrong if any position is, with a")
    print("non-null truth if any position has one; the last two columns count only documents that label the")
    print("field. Where every document is wrong (the data-table rebuild) no share of the wrong is given, and")
    print("no document-level detection is possible. A field wrong in every document with a non-null truth,")
    print("in none with a null truth, and the only wrong field in nearly all of them makes a document's label")
    print("the same as whether its truth has that value: the shipping notices' `destination.contact`.\n")
    print(markdown_table(rows), end="")
    by_phrasing = [row for p in runs for row in phrasing_rows(p)]
    if by_phrasing:
        print("\n## The second version of the shipping notices: by how a notice names its contact\n")
        print("The notices' second version (`shipping_notice_v2`) names the destination's contact in one of")
        print("five ways, read back here from each notice's text; the first version used the salutation only.\n")
        print(markdown_table(by_phrasing), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
