"""Score exported construct-eval items with Cleanlab's open-source TLM, on an OpenAI-compatible endpoint.

Runs in its own environment (TLM needs numpy>=2, construct-eval's netcal numpy<2):

    make venv                           # trustworthy-llm and the litellm it pins are in the lock
    construct-eval export --run RUN --out items.jsonl --data-dir ../shared/data/cleanlab
    OPENAI_API_KEY=local .venv/bin/python results/tlm_anchor/score_with_tlm.py \
        --items items.jsonl --out tlm_scores.jsonl --base-url http://127.0.0.1:8091/v1 --model qwen2.5-coder-0.5b
    construct-eval import-scores --run RUN --scores tlm_scores.jsonl --scorer tlm

Per document TLM gets what the generator got (the instruction and document, the JSON schema)
and the output as the assistant's reply, with ``response_format`` = the schema. It writes one
score row for the document (TLM's trustworthiness score, with the calls, tokens and seconds it
spent) and one per top-level field (TLM's per-field score), in construct-eval's external score
format; a document TLM could not score is written as unscored with TLM's reason. The full TLM
result (explanations included) goes to ``--raw``. Resumable: documents already in ``--out``
are skipped.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

DOCUMENT = "__doc__"


class CallCounter:
    """Counts the LLM calls TLM makes through litellm, and their tokens."""

    def __init__(self) -> None:
        from litellm.integrations.custom_logger import CustomLogger

        counter = self

        class _Logger(CustomLogger):
            async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
                counter.calls += 1
                usage = getattr(response_obj, "usage", None)
                if usage is not None:
                    counter.tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
                    counter.tokens += int(getattr(usage, "completion_tokens", 0) or 0)

            async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
                counter.calls += 1
                counter.failures += 1

        self.logger = _Logger()
        self.reset()

    def reset(self) -> None:
        self.calls = 0
        self.tokens = 0
        self.failures = 0


def messages_for(item: dict[str, Any]) -> list[dict[str, str]]:
    schema = json.dumps(item["schema"], ensure_ascii=False) if item.get("schema") else None
    system = "Answer with one JSON object" + (f" that follows this JSON schema:\n{schema}" if schema else ".")
    return [{"role": "system", "content": system}, {"role": "user", "content": item["request"]}]


def completion_for(item: dict[str, Any], model: str) -> dict[str, Any]:
    content = json.dumps(item["output"], ensure_ascii=False)
    return {
        "chat_completion": {
            "id": f"construct-eval-{item['id']}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        }
    }


def _finite(x: Any) -> float | None:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def score_rows(item: dict[str, Any], result: dict[str, Any] | None, error: str | None, cost: dict[str, Any]):
    """construct-eval external score rows for one document."""
    fields = list(item["output"]) if isinstance(item["output"], dict) else []
    if error is not None or result is None:
        reason = f"tlm_failed: {error}"
        rows = [{"id": item["id"], "field": DOCUMENT, "score": None, "reason": reason, **cost}]
        return rows + [{"id": item["id"], "field": f, "score": None, "reason": reason} for f in fields]
    doc = _finite(result.get("trustworthiness_score"))
    rows = [
        {"id": item["id"], "field": DOCUMENT, **cost}
        | ({"score": doc} if doc is not None else {"score": None, "reason": "tlm_no_score"})
    ]
    per_field = (result.get("metadata") or {}).get("per_field_score") or {}
    for f in fields:
        meta = per_field.get(f)
        score = _finite(meta.get("score") if isinstance(meta, dict) else getattr(meta, "score", None))
        rows.append(
            {"id": item["id"], "field": f, "granularity": "top"}
            | ({"score": score} if score is not None else {"score": None, "reason": "tlm_no_field_score"})
        )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--items", required=True)
    p.add_argument("--out", required=True)
    p.add_argument(
        "--raw",
        help="TLM's explanations and per-field details, one JSON line per document (default OUT with .raw.jsonl);"
        " they may quote the document, so keep them out of a repository for third-party data",
    )
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--quality-preset", default="medium")
    p.add_argument("--reasoning-effort", default="low", help="TLM refuses per-field scoring without reasoning")
    p.add_argument("--limit", type=int)
    p.add_argument("--ids", help="comma list of document ids to score (default all)")
    args = p.parse_args()

    # TLM reaches a local endpoint through litellm's OpenAI provider and these variables only
    os.environ["OPENAI_BASE_URL"] = args.base_url
    os.environ["OPENAI_API_BASE"] = args.base_url
    os.environ.setdefault("OPENAI_API_KEY", "local")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline: no remote price list
    import litellm
    from tlm import TLM
    from tlm.config.schema import Config

    counter = CallCounter()
    litellm.callbacks = [counter.logger]
    tlm = TLM(config=Config(quality_preset=args.quality_preset, reasoning_effort=args.reasoning_effort))

    out, raw = Path(args.out), Path(args.raw or Path(args.out).with_suffix(".raw.jsonl"))
    done = set()
    if out.exists():
        done = {json.loads(line)["id"] for line in out.read_text().splitlines() if line.strip()}
    items = [json.loads(line) for line in Path(args.items).read_text().splitlines() if line.strip()]
    if args.ids:
        wanted = args.ids.split(",")
        missing = set(wanted) - {it["id"] for it in items}
        if missing:
            raise SystemExit(f"error: {sorted(missing)} not in {args.items}")
        items = [it for it in items if it["id"] in wanted]
    items = items[: args.limit] if args.limit else items
    todo = [it for it in items if it["id"] not in done]
    print(f"TLM on {len(todo)} of {len(items)} documents ({len(items) - len(todo)} already scored)", file=sys.stderr)
    model = f"openai/{args.model}"
    for n, item in enumerate(todo, start=1):
        counter.reset()
        started = time.perf_counter()
        result, error = None, None
        try:
            result = tlm.score(
                response=completion_for(item, args.model),
                messages=messages_for(item),
                model=model,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "output", "schema": item.get("schema") or {"type": "object"}},
                },
            )
        except Exception as exc:  # TLM's own failures are recorded as unscored, never as a number
            error = f"{type(exc).__name__}: {str(exc)[:300]}"
        cost = {"calls": counter.calls, "tokens": counter.tokens, "seconds": round(time.perf_counter() - started, 3)}
        rows = score_rows(item, result, error, cost)
        with raw.open("a") as fh:
            kept = {k: v for k, v in (result or {}).items() if k != "response"}  # the output itself: not repeated
            fh.write(
                json.dumps(
                    {"id": item["id"], "error": error, "failed_calls": counter.failures, "result": kept},
                    default=lambda o: o.model_dump() if hasattr(o, "model_dump") else str(o),
                )
                + "\n"
            )
        with out.open("a") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in rows))
        print(
            f"[{n}/{len(todo)}] {item['id']}: score {rows[0].get('score')} calls {cost['calls']} ({counter.failures} failed) {cost['seconds']:.0f} s",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
