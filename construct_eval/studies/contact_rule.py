"""A rule that reads a shipping notice and its output, and no label: a ceiling beside the scores
of the natural-error study on the second version of the synthetic shipping notices (issue 35).

    .venv/bin/python -m construct_eval.studies.contact_rule RUN [--import]

The generator misses a destination's contact named in the notice's salutation ("Dear Ana Lima,")
or on an "Attn:" line, and finds it named elsewhere (``natural_error_patterns.md``). The rule
flags a notice whose output leaves ``destination.contact`` empty while the notice greets or
addresses a named person: a check a team could write once it has seen that pattern, from the
text and the output alone. It prints how many notices it flags, how many of them are wrong and
how many of the wrong notices it finds (labels read only for that count). With ``--import`` it
stores the rule as the document-level scorer ``contact_rule`` (0 flagged, 1 not) through
``construct-eval import-scores``, so the study's tables put it beside the judge and the other
scores on the same documents.

It knows the notices' templates (the generic greetings it does not count as a name), so it is a
ceiling for what such a rule can do, not a scorer to ship.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from construct_eval.cli import main as cli
from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT

SCORER = "contact_rule"
GENERIC = {"customer", "receiving team"}
"""Greetings of the notices that name nobody."""
ADDRESSED = re.compile(r"^(?:Dear (?P<dear>[^,\n]+),|Attn: (?P<attn>.+))$", re.MULTILINE)


def addressed_person(text: str) -> str | None:
    """The person a notice greets ("Dear NAME,") or addresses ("Attn: NAME"), if it names one."""
    for m in ADDRESSED.finditer(text):
        name = (m["dear"] or m["attn"]).strip()
        if name.lower() not in GENERIC:
            return name
    return None


def flags(run: RunDir) -> dict[str, bool]:
    """Per parsed document: does the rule flag it (contact empty, a named person addressed)?"""
    out = {}
    for item in run.judge_inputs()[0]:
        contact = (item.output.get("destination") or {}).get("contact") if isinstance(item.output, dict) else None
        out[item.doc_id] = contact in (None, "") and addressed_person(item.request) is not None
    return out


def summary(run: RunDir, flagged: dict[str, bool]) -> dict[str, int]:
    """Over the labelled documents among ``flagged``: how many, wrong, flagged, flagged and wrong."""
    wrong = {r["id"]: bool(r["wrong"]) for r in run.iter_rows("labels") if r["id"] in flagged}
    return {
        "documents": len(wrong),
        "wrong": sum(wrong.values()),
        "flagged": sum(flagged[i] for i in wrong),
        "flagged_wrong": sum(w and flagged[i] for i, w in wrong.items()),
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path)
    p.add_argument("--import", dest="store", action="store_true", help=f"store the rule as the scorer {SCORER}")
    args = p.parse_args(argv)
    run = RunDir(args.run, create=False)
    flagged = flags(run)
    s = summary(run, flagged)
    print(
        f"{args.run.name}: the rule flags {s['flagged']} of {s['documents']} labelled, parsed notices,"
        f" {s['flagged_wrong']} of them wrong; it finds {s['flagged_wrong']} of the {s['wrong']} wrong notices"
    )
    if args.store:
        rows = [{"id": i, "field": DOCUMENT, "score": 0.0 if f else 1.0} for i, f in flagged.items()]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as tmp:
            tmp.write("".join(json.dumps(r) + "\n" for r in rows))
        try:
            return cli(["import-scores", "--run", str(args.run), "--scores", tmp.name, "--scorer", SCORER])
        finally:
            Path(tmp.name).unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
