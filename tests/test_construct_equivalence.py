"""``construct`` equals the authors' own code: TLM 0.0.3 and ``construct`` on identical replies.

TLM (``trustworthy-llm==0.0.3``, a dependency of the package, run in a subprocess of the package's
own interpreter so that its litellm client is nothing the test process shares) scores 34 scripted outputs at two presets against a
scripted server that records every request and the reply it gave (``construct_replies``). The same
replies are then replayed to ``construct``: a request TLM never sent is refused. The test asks for
the same requests (messages, reply schema, temperature, reply budget), as many of them, and every
trust score, field score and explanation equal to 1e-9; an output TLM could not score (it raised)
must be unscored by ``construct`` too, with the template named.

Skipped, saying why, where TLM is not installed (an environment made without the lock).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from construct_eval.llm.client import LLMClient
from construct_eval.llm.endpoint import Endpoint
from construct_eval.scorers import construct_method as cm
from construct_eval.scorers.construct import TrustResult, answer_text, trust_async
from construct_eval.serving.scripted_server import ScriptedServer
from tests.construct_replies import RecordingJudge, ReplayJudge, canonical

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ("medium", "high")
pytestmark = pytest.mark.slow

FLAT = {
    "type": "object",
    "properties": {
        "company": {"type": "string"},
        "amount": {"type": "number"},
        "date": {"type": ["string", "null"]},
        "approved": {"type": "boolean"},
        "case": {"type": "string"},
    },
    "required": ["company", "amount", "date", "approved", "case"],
}
NESTED = {
    "type": "object",
    "properties": {
        "shipment_id": {"type": "string"},
        "origin": {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}}},
        "packages": {
            "type": "array",
            "items": {"type": "object", "properties": {"id": {"type": "string"}, "kg": {"type": "number"}}},
        },
        "customs": {"type": ["object", "null"]},
        "case": {"type": "string"},
    },
}
BROKEN = [
    "unreadable:field-accuracy",
    "unreadable:per-field-certainty",
    "unreadable:knowledge-gap",
    "missing-field:per-field-correctness",
    "missing-field:per-field-certainty",
    "no-score:argument",
    "words:argument",
    "unreadable:argument",
]


def cases() -> list[dict]:
    """34 outputs: flat and nested, right and perturbed, plain and broken replies."""
    out = []
    for i in range(34):
        broken = BROKEN[(i // 4) % len(BROKEN)] if i % 4 == 3 else "plain"
        if i % 2 == 0:
            truth = {"company": f"Firm {i} AG", "amount": 100.5 + i, "date": None if i % 3 else f"2024-01-0{i % 9 + 1}",
                     "approved": bool(i % 5), "case": broken}  # fmt: skip
            schema = FLAT
        else:
            truth = {"shipment_id": f"SHP-{i:04d}", "origin": {"city": "Porto", "country": "Portugal"},
                     "packages": [{"id": f"PKG-{i}", "kg": 3.5 * i}], "customs": None if i % 3 else {"hs": "24.41"},
                     "case": broken}  # fmt: skip
            schema = NESTED
        output = json.loads(json.dumps(truth))
        if i % 3 == 0:  # a wrong value
            key = "amount" if schema is FLAT else "shipment_id"
            output[key] = 999 if schema is FLAT else "SHP-9999"
        kind = "confident notice" if i % 6 == 0 else "Ünïcode notice"
        text = f"Extract the record as JSON.\n\nDocument {i}: {kind}.\nOUTPUT={json.dumps(truth)}"
        out.append({"id": f"case-{i:02d}", "text": text, "schema": schema, "output": output,
                    "perplexity": 0.91 - i / 100 if i % 5 == 0 else None})  # fmt: skip
    return out


def _tlm_env_or_skip() -> Path:
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("trustworthy-llm")
    except PackageNotFoundError:
        pytest.skip("trustworthy-llm (TLM) is not installed in this environment: `make venv` installs the lock")
    assert installed == "0.0.3", f"the equivalence is with TLM 0.0.3, this environment has {installed}"
    return Path(sys.executable)


def _oracle(python: Path, base_url: str, tmp: Path, preset: str) -> dict[str, dict]:
    lines = []
    for c in cases():
        lines.append(
            {
                "id": c["id"],
                "messages": [{"role": "user", "content": c["text"]}],
                "response_format": cm.response_format(c["schema"]),
                "answer": answer_text(c["output"]),
                "preset": preset,
                "reasoning_effort": None,
                "perplexity": c["perplexity"],
            }
        )
    src, out = tmp / f"cases-{preset}.jsonl", tmp / f"tlm-{preset}.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    done = subprocess.run(
        [str(python), str(ROOT / "tests" / "tlm_oracle.py"), "--cases", str(src), "--out", str(out),
         "--base-url", base_url],
        capture_output=True, text=True, timeout=900, env=env, cwd=tmp,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}


async def _construct(base_url: str, preset: str) -> dict[str, TrustResult]:
    endpoint = Endpoint(base_url=base_url, model="scripted", backend="generic")
    async with LLMClient(endpoint, cache=False, concurrency=4) as client:
        results = {}
        for c in cases():
            results[c["id"]] = await trust_async(
                client, c["text"], c["schema"], c["output"], config=cm.Config(preset), perplexity=c["perplexity"]
            )
        return results


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    python = _tlm_env_or_skip()
    tmp = tmp_path_factory.mktemp("tlm")
    out = {}
    for preset in PRESETS:
        recorder = RecordingJudge()
        with ScriptedServer(recorder) as server:
            tlm = _oracle(python, server.base_url, tmp, preset)
        replay = ReplayJudge(recorder.replies)
        with ScriptedServer(replay) as server:
            ours = asyncio.run(_construct(server.base_url, preset))
        out[preset] = (tlm, ours, recorder, replay)
    return out


@pytest.mark.parametrize("preset", PRESETS)
def test_construct_sends_tlms_requests(compared: dict, preset: str) -> None:
    _tlm, _ours, recorder, replay = compared[preset]
    assert not replay.unknown, f"construct sent {len(replay.unknown)} request(s) TLM never sent"
    assert Counter(map(canonical, replay.requests)) == Counter(map(canonical, recorder.requests))
    per_output = cm.Config(preset).calls
    assert len(recorder.requests) == per_output * len(cases())  # 5 calls per output at medium, 9 at high


@pytest.mark.parametrize("preset", PRESETS)
def test_construct_scores_equal_tlms(compared: dict, preset: str) -> None:
    tlm, ours, _recorder, _replay = compared[preset]
    scored = 0
    for case_id, theirs in tlm.items():
        mine = ours[case_id]
        if "error" in theirs:
            assert mine.score is None and mine.reason, f"{case_id}: TLM raised {theirs['error']}, construct scored it"
            continue
        assert mine.reason is None, f"{case_id}: TLM scored it, construct says {mine.reason}"
        assert mine.score == pytest.approx(theirs["score"], abs=1e-9), case_id
        assert set(mine.fields) == set(theirs["fields"]), case_id
        for name, (score, explanation) in theirs["fields"].items():
            assert mine.fields[name] == pytest.approx(score, abs=1e-9), (case_id, name)
            assert mine.explanations[name] == explanation, (case_id, name)
        assert mine.explanation == theirs["explanation"], case_id
        scored += 1
    errors = sum("error" in t for t in tlm.values())
    assert scored >= 25 and errors >= 3, (scored, errors)  # both paths are exercised


def test_tlm_refuses_what_construct_refuses() -> None:
    """Presets without reasoning: TLM's per-field templates raise; construct says so up front."""
    with pytest.raises(cm.ConstructConfigError, match="reasoning"):
        cm.Config("low")
    assert cm.Config("low", "low").calls == 5 and cm.Config("best").calls == 13


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
