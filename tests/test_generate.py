"""Generation, labelling and the token log-prob baseline end to end, over real HTTP (scripted server)."""

from __future__ import annotations

import json

import pytest

from construct_eval.cli import main
from construct_eval.data.datasets import DatasetError, load_dataset
from construct_eval.data.datasets.custom import load_file
from construct_eval.data.runs import RunDir
from construct_eval.serving.scripted_server import Reply, ScriptedServer


def _tokens(text: str, logprob: float) -> list[dict]:
    return [{"token": text[i : i + 3], "logprob": logprob, "top_logprobs": []} for i in range(0, len(text), 3)]


class GeneratorScript:
    """Answers each document with a prepared reply; counts calls per document."""

    def __init__(self, replies: dict[str, Reply]):
        self.replies = replies
        self.calls: dict[str, int] = {}

    def __call__(self, req):
        user = req.body["messages"][-1]["content"]
        self.calls[user] = self.calls.get(user, 0) + 1
        return self.replies[user]


@pytest.fixture
def synthetic4():
    return load_dataset("synthetic", n=4, seed=11)


def _replies(ds):
    r0, r1, r2, r3 = ds.records
    wrong = dict(r1.ground_truth)
    first_key = next(iter(wrong))
    wrong[first_key] = "WRONG-VALUE"
    good = json.dumps(r0.ground_truth)
    bad = json.dumps(wrong)
    return {
        r0.text: Reply(good, logprobs=_tokens(good, -0.05)),
        r1.text: Reply(bad, logprobs=_tokens(bad, -0.5)),
        r2.text: Reply("I cannot help with that."),
        r3.text: Reply(json.dumps(r3.ground_truth)[:40], finish_reason="length"),
    }, first_key


def test_generate_label_and_logprob_baseline_end_to_end(tmp_path, synthetic4, capsys):
    replies, first_key = _replies(synthetic4)
    script = GeneratorScript(replies)
    run_dir = tmp_path / "run"
    with ScriptedServer(script) as server:
        args = ["generate", "--run", str(run_dir), "--dataset", "synthetic", "--n", "4", "--seed", "11"]
        args += ["--base-url", server.base_url, "--model", "gen", "--quiet", "--no-cache"]
        assert main(args) == 0
        assert main(args) == 0  # resume: nothing left to do
    assert all(n == 1 for n in script.calls.values()) and len(script.calls) == 4
    run = RunDir(run_dir, create=False)
    outputs = {r["id"]: r for r in run.read("outputs")}
    ids = [r.id for r in synthetic4.records]
    assert outputs[ids[0]]["output"] == synthetic4.records[0].ground_truth
    assert outputs[ids[2]]["parse_error"].startswith("invalid_json")
    assert outputs[ids[3]]["parse_error"].startswith("truncated")
    assert outputs[ids[0]]["token_logprobs"][0] == [json.dumps(synthetic4.records[0].ground_truth)[:3], -0.05]
    meta = run.meta()
    assert meta["generator"]["endpoint"]["model"] == "gen" and meta["dataset"]["source"]["kind"] == "synthetic"

    assert main(["label", "--run", str(run_dir)]) == 0
    labels = {r["id"]: r for r in run.read("labels")}
    assert [labels[i]["wrong"] for i in ids] == [False, True, True, True]
    assert labels[ids[2]]["parse_failed"] and labels[ids[3]]["parse_failed"]
    assert [f["path"] for f in labels[ids[1]]["fields"] if f["wrong"]] == [first_key]
    assert "4 documents: 3 wrong (75.0%), 2 unparsed" in capsys.readouterr().out

    assert main(["logprob-scores", "--run", str(run_dir)]) == 0
    scores = [r for r in run.read("scores") if r["field"] == "__doc__"]
    by_id = {r["id"]: r["score"] for r in scores}
    assert set(by_id) == {ids[0], ids[1]}  # unparsed outputs get no score
    assert by_id[ids[0]] > by_id[ids[1]]


def test_refer_only_runs_reload_documents_and_check_hashes(tmp_path, shared_data):
    run_dir = tmp_path / "inj"
    assert main(["inject", "--run", str(run_dir), "--dataset", "insurance_claims", "--data-dir", str(shared_data)]) == 0
    records = RunDir(run_dir).read("records")
    assert all(set(r) == {"id", "dataset", "source_hash"} for r in records)  # no copied text or truth
    assert main(["label", "--run", str(run_dir), "--data-dir", str(shared_data)]) == 0
    items, skipped = RunDir(run_dir).judge_inputs(data_dir=shared_data)
    assert len(items) == 30 and not skipped and "Document:" in items[0].request
    # a changed document is refused, naming it
    rec = json.loads((run_dir / "records.jsonl").read_text().splitlines()[0])
    lines = (run_dir / "records.jsonl").read_text().splitlines()
    lines[0] = json.dumps({**rec, "source_hash": "0" * 64})
    (run_dir / "records.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["label", "--run", str(run_dir), "--data-dir", str(shared_data)]) == 2


def test_custom_file_dataset_and_named_errors(tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"name": {"type": "string"}}}))
    good = tmp_path / "data.jsonl"
    good.write_text(json.dumps({"doc": "Name: Ann", "truth": {"name": "Ann"}}) + "\n")
    ds = load_file(good, schema, input_col="doc", truth_col="truth")
    assert ds.records[0].ground_truth == {"name": "Ann"} and ds.embed_documents
    csv_file = tmp_path / "data.csv"
    csv_file.write_text('doc,truth\n"Name: Ann","{\'name\': \'Ann\'}"\n"Name: Bo","[1, 2]"\n')
    with pytest.raises(DatasetError, match=r"data\.csv row 1 \(document data-00001\).*JSON object"):
        load_file(csv_file, schema, input_col="doc", truth_col="truth")
    with pytest.raises(DatasetError, match="no column 'text'"):
        load_file(good, schema)
    bad_schema = tmp_path / "bad.json"
    bad_schema.write_text("[1]")
    with pytest.raises(DatasetError, match="must be an object"):
        load_file(good, bad_schema, input_col="doc", truth_col="truth")
    with pytest.raises(DatasetError, match="needs --schema"):
        load_dataset(str(good))


def test_a_narrower_rerun_keeps_the_run_description_of_all_its_documents(tmp_path, shared_data):
    """`generate --limit 2 --samples 1` on a 3-document run must not narrow run.json's dataset to 2
    documents: the run refers to documents by id, and the description is how they come back."""
    run_dir = tmp_path / "run"
    common = ["generate", "--run", str(run_dir), "--dataset", "insurance_claims", "--data-dir", str(shared_data)]
    with ScriptedServer(lambda req: Reply("{}")) as server:
        endpoint = ["--base-url", server.base_url, "--model", "gen", "--quiet", "--no-cache"]
        assert main([*common, "--limit", "3", *endpoint]) == 0
        assert main([*common, "--limit", "2", "--samples", "1", *endpoint]) == 0
    run = RunDir(run_dir, create=False)
    assert run.meta()["dataset"]["documents"] == 3
    items, _ = run.judge_inputs(data_dir=shared_data)
    assert len(items) == 3 and len(run.read("samples")) == 2


def test_generate_with_ids_samples_only_those_documents_and_names_an_unknown_one(tmp_path, synthetic4, capsys):
    """`generate --ids` (a study's chosen documents, e.g. for self-consistency samples) calls for
    those documents only, keeps the run's description and source, and an id the dataset does not
    have is an error that names it, before any call."""
    run_dir = tmp_path / "run"
    common = ["generate", "--run", str(run_dir), "--dataset", "synthetic", "--n", "4", "--seed", "11"]
    a, b, _, d = (r.id for r in synthetic4.records)
    with ScriptedServer(lambda req: Reply("{}")) as server:
        endpoint = ["--base-url", server.base_url, "--model", "gen", "--quiet", "--no-cache"]
        assert main([*common, *endpoint]) == 0
        source = RunDir(run_dir, create=False).meta()["dataset"]["source"]
        assert main([*common, "--ids", f"{d},{b}", "--samples", "2", *endpoint]) == 0
        assert len(server.requests) == 4 + 2 * 2
        assert main([*common, "--ids", f"{a},synthetic-nope", "--samples", "2", *endpoint]) != 0
        assert "not among its documents: ['synthetic-nope']" in capsys.readouterr().err
        assert len(server.requests) == 8
    run = RunDir(run_dir, create=False)
    assert run.meta()["dataset"]["source"] == source and run.meta()["dataset"]["documents"] == 4
    assert sorted(r["id"] for r in run.read("samples")) == sorted([b, b, d, d])
