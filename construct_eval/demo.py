"""``make demo``: the judge on the embedded local model, end to end, offline.

Starts the llama.cpp server with a packaged model, judges a built-in insurance claim twice
(its correct extraction, and a copy with planted errors) per document, per field and
jointly, writes the judgments to a run folder and a ``report.md`` beside it, and stops the
server. It shows what the judge core does on a real (small) LLM; the full pipeline
(dataset, generation, labels, calibration, bias) builds on the same run folder.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

from construct_eval.judge import Judge, JudgeConfig
from construct_eval.llm import Endpoint, LLMClient, run_sync
from construct_eval.local_llm import DEFAULT_MODEL, MODELS, LocalServer, ModelError
from construct_eval.runs import RunDir
from construct_eval.scoring import score_run

CLAIM = """[Email received: 2024-03-11]
Subject: Water damage claim CLM-550812

Hello, this is Marta Okafor. I am writing about the burst pipe in my kitchen on 2024-03-09.
My policy number is POL-300114 (home contents cover, valid from 2023-07-01 to 2024-06-30).
The water ruined the dishwasher (Bosch SMS6ZCI, bought 2021) and the oak floor. The plumber
estimated the damage at 4,250 EUR. My neighbour Mr. Dube reported a similar leak last year
under claim CLM-550811, but that one is unrelated. No police report was filed.
"""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "claim_id": {"type": "string"},
        "report_date": {"type": "string", "description": "YYYY-MM-DD"},
        "incident_date": {"type": "string", "description": "YYYY-MM-DD"},
        "reported_by": {"type": "string"},
        "policy": {
            "type": "object",
            "properties": {
                "policy_number": {"type": "string"},
                "effective_date": {"type": "string"},
                "expiration_date": {"type": "string"},
            },
        },
        "damaged_items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"item": {"type": "string"}, "year": {"type": ["integer", "null"]}},
            },
        },
        "estimated_damage_amount": {"type": "number"},
        "police_report_number": {"type": ["string", "null"]},
    },
}

TRUTH: dict[str, Any] = {
    "claim_id": "CLM-550812",
    "report_date": "2024-03-11",
    "incident_date": "2024-03-09",
    "reported_by": "Marta Okafor",
    "policy": {"policy_number": "POL-300114", "effective_date": "2023-07-01", "expiration_date": "2024-06-30"},
    "damaged_items": [{"item": "dishwasher Bosch SMS6ZCI", "year": 2021}, {"item": "oak floor", "year": None}],
    "estimated_damage_amount": 4250,
    "police_report_number": None,
}


def flawed_output() -> tuple[dict[str, Any], list[str]]:
    """The truth with errors a generator really makes; returns the output and the wrong fields."""
    out = copy.deepcopy(TRUTH)
    out["claim_id"] = "CLM-550811"  # the other claim id in the document
    out["incident_date"] = "2024-03-11"  # the other date
    out["estimated_damage_amount"] = 4520  # digit slip
    return out, ["claim_id", "incident_date", "estimated_damage_amount"]


def build_run(path: Path) -> RunDir:
    run = RunDir(path)
    (run.path / "schema.json").write_text(json.dumps(SCHEMA, indent=2))
    request = "Extract the insurance claim from this document as JSON following the schema.\n\n" + CLAIM
    flawed, wrong = flawed_output()
    have = {r["id"] for r in run.iter_rows("records")}
    if "claim-correct" not in have:
        run.append(
            "records", [{"id": "claim-correct", "request": request, "ground_truth": TRUTH, "planted_errors": []}]
        )
        run.append("outputs", [{"id": "claim-correct", "output": TRUTH}])
    if "claim-flawed" not in have:
        run.append(
            "records", [{"id": "claim-flawed", "request": request, "ground_truth": TRUTH, "planted_errors": wrong}]
        )
        run.append("outputs", [{"id": "claim-flawed", "output": flawed}])
    return run


def report(run: RunDir, model: str, seconds: float, command: str) -> str:
    rows = run.read("judgments")
    planted = {r["id"]: set(r.get("planted_errors", [])) for r in run.iter_rows("records")}
    lines = [
        "# construct-eval demo",
        "",
        f"Made by `{command}` with the embedded model `{model}` ({MODELS[model].description if model in MODELS else model})",
        f"in {seconds:.0f} s. Judge temperature 0; ratings 1-10, `-` = unscored (reason given).",
        "",
        "| document | mode | field | planted error | rating | expected rating | status |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["doc_id"], r["mode"], r["field"])):
        wrong = "yes" if r["field"] in planted.get(r["doc_id"], set()) else ""
        if r["field"] == "__doc__":
            wrong = "yes" if planted.get(r["doc_id"]) else "no"
        exp = f"{r['expected_rating']:.2f}" if r.get("expected_rating") is not None else ""
        status = r["status"] if r["status"] == "ok" else f"unscored: {r['reason']}"
        lines.append(
            f"| {r['doc_id']} | {r['mode']} | `{r['field']}` | {wrong} | {r['rating'] if r['rating'] is not None else '-'} | {exp} | {status} |"
        )
    lines += [
        "",
        "A small local judge is a weak detector: compare the ratings of the planted-error fields",
        "with the others before trusting it. The notebooks measure this on real data.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Judge a built-in document on the embedded local model.")
    parser.add_argument("--out", default="results/demo")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    args = parser.parse_args(argv)
    out = Path(args.out)
    run = build_run(out / "run")
    command = "make demo" if argv is None else "python -m construct_eval.demo " + " ".join(argv)
    started = time.perf_counter()
    try:
        print(f"starting the local llama.cpp server with {args.model} ...", flush=True)
        with LocalServer(args.model) as server:
            print(f"server ready at {server.base_url}", flush=True)
            endpoint = Endpoint(server.base_url, server.model_name, backend="llamacpp")

            async def go() -> Any:
                async with LLMClient(endpoint, concurrency=1, timeout_s=600) as client:
                    judge = Judge(client, JudgeConfig(max_tokens=160, joint_max_tokens=900, explanation_cap=300))
                    return await score_run(run, judge, ["doc", "field", "fields-joint"])

            summary = run_sync(go())
    except ModelError as exc:
        print(f"demo stopped: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - started
    print("\n".join(summary.lines()))
    (out / "report.md").write_text(report(run, args.model, seconds, command))
    print(f"wrote {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
