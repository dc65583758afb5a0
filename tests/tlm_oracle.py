"""Score cases with Cleanlab's open-source TLM itself: the oracle of ``test_construct_equivalence``.

Runs as a subprocess of the package's interpreter (``trustworthy-llm==0.0.3`` is a dependency),
never imported by the tests' own process. Reads cases (JSON lines) from ``--cases``, calls ``TLM.score`` for each
on the OpenAI-compatible endpoint at ``--base-url`` and writes one JSON line per case to
``--out``: TLM's trust score, per-field scores and explanation, or the error it raised.

A case: ``{"id", "messages", "response_format", "answer", "preset", "reasoning_effort",
"perplexity"}`` (the last two may be null).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--cases", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", default="scripted")
    args = p.parse_args()
    # TLM reaches an OpenAI-compatible endpoint through litellm's OpenAI provider: every call,
    # its reflection calls included (they use DEFAULT_MODEL), goes to this base URL and model
    os.environ["OPENAI_BASE_URL"] = args.base_url
    os.environ["OPENAI_API_BASE"] = args.base_url
    os.environ.setdefault("OPENAI_API_KEY", "local")
    os.environ["DEFAULT_MODEL"] = f"openai/{args.model}"
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: no remote price list
    import litellm

    litellm.num_retries = 0
    from tlm import TLM
    from tlm.config.schema import Config

    with open(args.cases) as fh, open(args.out, "w") as out:
        for line in fh:
            case = json.loads(line)
            config = Config(quality_preset=case["preset"], reasoning_effort=case.get("reasoning_effort"))
            response = {
                "chat_completion": {
                    "id": case["id"],
                    "object": "chat.completion",
                    "created": 0,
                    "model": args.model,
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": case["answer"]},
                        }
                    ],
                }
            }
            if case.get("perplexity") is not None:
                response["perplexity"] = case["perplexity"]
            row: dict = {"id": case["id"], "preset": case["preset"]}
            try:
                result = TLM(config=config).score(
                    response=response,
                    messages=case["messages"],
                    model=f"openai/{args.model}",
                    response_format=case["response_format"],
                )
                score = result["trustworthiness_score"]
                row["score"] = None if score is None or (isinstance(score, float) and math.isnan(score)) else score
                per_field = (result.get("metadata") or {}).get("per_field_score") or {}
                row["fields"] = {k: [v["score"], v["explanation"]] for k, v in per_field.items()}
                row["explanation"] = result.get("explanation")
            except Exception as exc:  # TLM's own failure is what the test compares
                row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
            out.write(json.dumps(row) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
