"""The generation instruction: the benchmark's own (default for benchmark datasets) or the package's.

Runs recorded before the choice existed name no prompt and must get back, byte for byte, the
request text they were judged on (their resume keys depend on it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from construct_eval.cli import main
from construct_eval.data.datasets import DatasetError, load_dataset, reload_from_source
from construct_eval.data.datasets.cleanlab import spec_file
from construct_eval.data.datasets.prompts import benchmark_instruction, recorded_choice
from construct_eval.data.runs import RunDir
from construct_eval.serving.scripted_server import Reply, ScriptedServer

RUNS = Path(__file__).resolve().parents[1] / "results" / "runs"


@pytest.mark.parametrize("name", ["financial_ner", "insurance_claims", "pii"])
def test_benchmark_datasets_default_to_the_benchmark_instruction(shared_data, name):
    ds = load_dataset(name, data_dir=shared_data)
    assert ds.source["prompt"] == "benchmark" and ds.system_prompt == benchmark_instruction(name)
    assert ds.describe()["system_prompt"] == ds.system_prompt  # the text goes into run.json
    package = load_dataset(name, data_dir=shared_data, prompt="package")
    assert package.source["prompt"] == "package" and package.system_prompt == spec_file(name)["system_prompt"]
    assert package.system_prompt != ds.system_prompt
    assert ds.request_text(ds.records[0]).startswith(ds.system_prompt)  # what the judge is shown


def test_the_instructions_carry_the_benchmarks_substance():
    fin = benchmark_instruction("financial_ner")
    for category in ("Company", "Date", "Location", "Money", "Person", "Product", "Quantity"):
        assert f"{category}:" in fin
    for rule in ("keeping the wording", "null when the category has no entity", "URLs", "split a range"):
        assert rule in fin
    assert "YYYY-MM-DD" in benchmark_instruction("insurance_claims")
    assert "every field present" in benchmark_instruction("pii")
    table = benchmark_instruction("data_table_analysis")
    for rule in ('"str", "int" or "float"', "without the header", '"Identifier"', 'use "" in string columns'):
        assert rule in table
    assert benchmark_instruction("synthetic") is None


def test_recorded_runs_without_a_prompt_get_the_package_prompt_back(shared_data):
    """The recorded generated run's run.json holds the package prompt; reloading it gives the same text."""
    meta = json.loads((RUNS / "financial_ner-sample200" / "run.json").read_text())
    assert "prompt" not in meta["dataset"]["source"] and recorded_choice(meta) == "package"
    ds = reload_from_source(meta["dataset"]["source"], data_dir=shared_data)
    assert ds.system_prompt == meta["dataset"]["system_prompt"]
    bench = reload_from_source({**meta["dataset"]["source"], "prompt": "benchmark"}, data_dir=shared_data)
    assert bench.system_prompt == benchmark_instruction("financial_ner")
    assert recorded_choice({}) is None


def test_datasets_without_benchmark_instructions_refuse_that_choice(tmp_path):
    assert load_dataset("synthetic", n=3).source["prompt"] == "package"
    with pytest.raises(DatasetError, match="'synthetic' has no benchmark instructions"):
        load_dataset("synthetic", n=3, prompt="benchmark")
    with pytest.raises(DatasetError, match="unknown prompt 'fancy'"):
        load_dataset("synthetic", n=3, prompt="fancy")
    with pytest.raises(DatasetError, match="unknown dataset"):
        load_dataset("nope", prompt="benchmark")


def test_generate_records_the_prompt_and_a_rerun_keeps_it(tmp_path, shared_data):
    sent: list[str] = []

    def reply(req):
        sent.append(req.body["messages"][0]["content"])
        return Reply("{}")

    run_dir = tmp_path / "run"
    common = ["generate", "--run", str(run_dir), "--dataset", "financial_ner", "--data-dir", str(shared_data)]
    with ScriptedServer(reply) as server:
        endpoint = ["--base-url", server.base_url, "--model", "gen", "--quiet", "--no-cache"]
        assert main([*common, "--limit", "2", *endpoint]) == 0
        assert all(s.startswith(benchmark_instruction("financial_ner")) for s in sent) and len(sent) == 2
        meta = RunDir(run_dir, create=False).meta()
        assert meta["dataset"]["source"]["prompt"] == "benchmark"
        assert meta["dataset"]["system_prompt"] == benchmark_instruction("financial_ner")
        # a rerun that does not name a prompt keeps the run's; one that names another is refused
        assert main([*common, "--limit", "3", *endpoint]) == 0
        assert len(sent) == 3 and sent[-1].startswith(benchmark_instruction("financial_ner"))
        assert main([*common, "--limit", "4", "--prompt", "package", *endpoint]) == 2
        assert len(sent) == 3
        # the judge's view of the run: the benchmark instruction and the document
        items, _ = RunDir(run_dir, create=False).judge_inputs(data_dir=shared_data)
        assert len(items) == 3 and all(i.request.startswith(benchmark_instruction("financial_ner")) for i in items)
        # the package prompt on request, in a new run
        other = tmp_path / "package"
        args = ["generate", "--run", str(other), "--dataset", "financial_ner", "--data-dir", str(shared_data)]
        assert main([*args, "--limit", "1", "--prompt", "package", *endpoint]) == 0
        assert sent[-1].startswith(spec_file("financial_ner")["system_prompt"])
        assert RunDir(other, create=False).meta()["dataset"]["source"]["prompt"] == "package"
