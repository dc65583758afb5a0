"""Probe: does Cleanlab's open `tlm` package score a structured output against a local
OpenAI-compatible endpoint? The scripted server stands in for the model and records every
request the package sends (see README.md beside this file for what it found)."""

import json
import logging
import os
import sys
import traceback
from pathlib import Path

logging.basicConfig(level=logging.ERROR)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from construct_eval.serving.scripted_server import Reply, ScriptedServer  # noqa: E402

seen = []


def script(req):
    seen.append(req.body)
    rf = req.body.get("response_format")
    return Reply(json.dumps({"a": "x"}) if rf else "The answer is fine.")


with ScriptedServer(script) as server:
    os.environ["OPENAI_BASE_URL"] = server.base_url
    os.environ["OPENAI_API_BASE"] = server.base_url
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    from tlm import TLM
    from tlm.config.schema import Config

    cfg = Config(
        model="qwen-local", provider="openai", api_base=server.base_url, api_key="sk-local",
        quality_preset="low", reasoning_effort="low",
    )  # fmt: skip
    tlm = TLM(config=cfg)
    schema = {
        "type": "object",
        "properties": {"claim_id": {"type": "string"}, "amount": {"type": "integer"}},
        "required": ["claim_id", "amount"],
        "additionalProperties": False,
    }
    msgs = [{"role": "user", "content": "Extract: claim CLM-1, amount 5"}]
    content = json.dumps({"claim_id": "CLM-1", "amount": 5})
    choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
    completion = {"id": "x", "object": "chat.completion", "created": 0, "model": "qwen-local", "choices": [choice]}
    try:
        out = tlm.score(
            response={"chat_completion": completion}, messages=msgs, model="openai/qwen-local",
            api_base=server.base_url, api_key="sk-local",
            response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema, "strict": True}},
        )  # fmt: skip
        print("RESULT", json.dumps(out, default=str)[:1500])
    except Exception:
        traceback.print_exc()
print("REQUESTS", len(seen))
for b in seen[:8]:
    print(json.dumps({k: v for k, v in b.items() if k != "messages"})[:400])
    print("   user:", b["messages"][-1]["content"][:300].replace("\n", " "))
