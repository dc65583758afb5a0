"""Shared fixtures: a scripted OpenAI-compatible server on 127.0.0.1 and small run folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from construct_eval.data.runs import RunDir
from construct_eval.serving.scripted_server import ScriptedServer

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "cleanlab"

SCHEMA = {
    "type": "object",
    "properties": {
        "invoice_id": {"type": "string"},
        "total": {"type": "number"},
        "buyer": {"type": "object", "properties": {"name": {"type": "string"}, "city": {"type": "string"}}},
        "lines": {
            "type": "array",
            "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}},
        },
    },
}


def make_item(i: int) -> dict:
    return {
        "id": f"doc-{i:03d}",
        "request": f"Extract the invoice. Invoice INV-{i} for ACME {i} in Springfield, total {100 + i}.50, 2 x SKU-{i}.",
        "output": {
            "invoice_id": f"INV-{i}",
            "total": 100 + i + 0.5,
            "buyer": {"name": f"ACME {i}", "city": "Springfield"},
            "lines": [{"sku": f"SKU-{i}", "qty": 2}],
        },
    }


def make_run(path: Path, n: int) -> RunDir:
    run = RunDir(path)
    (run.path / "schema.json").write_text(json.dumps(SCHEMA))
    items = [make_item(i) for i in range(n)]
    run.append("records", [{"id": it["id"], "request": it["request"]} for it in items])
    run.append("outputs", [{"id": it["id"], "output": it["output"]} for it in items])
    return run


def injected_run(path: Path, n: int, doc_error_rate: float) -> RunDir:
    """A labelled synthetic run of ``n`` documents with errors planted in about ``doc_error_rate`` of
    them, made by the command line as a user makes one (``inject``, then ``label``)."""
    from construct_eval.cli import main

    argv = [
        "inject",
        "--run",
        str(path),
        "--dataset",
        "synthetic",
        "--n",
        str(n),
        "--doc-error-rate",
        str(doc_error_rate),
    ]
    assert main(argv) == 0
    assert main(["label", "--run", str(path)]) == 0
    return RunDir(path, create=False)


@pytest.fixture
def scripted_server():
    with ScriptedServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Never touch the user's cache from tests."""
    monkeypatch.setenv("CONSTRUCT_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared benchmark data not found at {SHARED_DATA} (only present on the project's machines)")
    return SHARED_DATA


def env_without_proxy() -> dict:
    env = dict(os.environ)
    for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env.pop(k, None)
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return env
