"""The data-table analysis task: its rules on hand-made tables, the real file format, the offline rebuild."""

from __future__ import annotations

import csv
import json

import pytest

from construct_eval.cli import main
from construct_eval.data.datasets import DatasetError, load_dataset, reload_from_source
from construct_eval.data.datasets.prompts import benchmark_instruction
from construct_eval.data.datasets.tables import TableError, analyse_table, column_type
from construct_eval.data.labels import LabelRules, label_output
from construct_eval.data.runs import RunDir
from construct_eval.serving.scripted_server import Reply, ScriptedServer

WITH_ID = "Identifier,city,pop,area\nA-17,Oslo,709,454.0\nB2,,,\nC-300,Bergen,285,465.3\n"
NO_ID = "name,score,rank\nann,1.5,2\nbo,2,1\n"
EMPTY_IDS = "Identifier,x\n,1\n,2\n"


def test_rules_on_a_table_with_an_identifier_and_empty_cells():
    assert analyse_table(WITH_ID) == {
        "num_rows": 3,
        "num_columns": 4,
        "column_types": {"Identifier": "str", "city": "str", "pop": "int", "area": "float"},
        "column_max": {"Identifier": None, "city": None, "pop": 709, "area": 465.3},
        "column_min": {"Identifier": None, "city": None, "pop": 285, "area": 454.0},
        "identifier_first": "A-17",
        "identifier_last": "C-300",
        "identifier_shortest": "B2",
    }


def test_rules_without_an_identifier_and_with_empty_identifier_cells():
    truth = analyse_table(NO_ID)
    assert truth["column_types"] == {"name": "str", "score": "float", "rank": "int"}
    assert (truth["column_max"]["score"], truth["column_min"]["rank"]) == (2.0, 1)
    assert truth["identifier_first"] is truth["identifier_last"] is truth["identifier_shortest"] is None
    empty = analyse_table(EMPTY_IDS)  # an Identifier column with empty cells: "" (not null)
    assert (empty["identifier_first"], empty["identifier_last"], empty["identifier_shortest"]) == ("", "", "")
    assert analyse_table("Identifier,x\nlong,1\nab,2\ncd,3\n")["identifier_shortest"] == "ab"  # first of the shortest


@pytest.mark.parametrize(
    "cells, kind",
    [(["1", "-2", ""], "int"), (["1", "2.5"], "float"), (["29.0"], "float"), (["1e3", "4"], "float"),
     (["1", "x"], "str"), (["", ""], "str"), (["nan", "1"], "str")],
)  # fmt: skip
def test_column_types(cells, kind):
    assert column_type(cells) == kind


def test_bad_tables_are_named():
    with pytest.raises(TableError, match="row 2 has 3 cells, the header 2"):
        analyse_table("a,b\n1,2\n1,2,3\n")
    with pytest.raises(TableError, match="twice"):
        analyse_table("a,a\n1,2\n")
    with pytest.raises(TableError, match="no header"):
        analyse_table("\n\n")


def _rules(ds) -> LabelRules:
    return LabelRules.from_dict(ds.label_rules)


def _real_file(tmp_path, tables: list[str]) -> None:
    """Hand-made rows in the benchmark's file format: a `table` column, JSON `ground_truth`."""
    folder = tmp_path / "data_table_analysis"
    folder.mkdir()
    with (folder / "data_table_analysis.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["table", "ground_truth"])
        for t in tables:
            writer.writerow([t, json.dumps(analyse_table(t))])


def test_the_benchmark_file_loads_with_its_spec_and_labels_by_the_benchmarks_comparison(tmp_path):
    _real_file(tmp_path, [WITH_ID, NO_ID, EMPTY_IDS])
    ds = load_dataset("data_table_analysis", data_dir=tmp_path)
    assert [r.id for r in ds.records] == [f"data_table_analysis-0000{i}" for i in range(3)]
    assert ds.system_prompt == benchmark_instruction("data_table_analysis") and not ds.embed_documents
    assert set(ds.schema["properties"]) == set(analyse_table(NO_ID)) and "inferred" not in str(ds.source)
    rules, truth = _rules(ds), ds.records[0].ground_truth
    assert not label_output("d", truth, truth, schema=ds.schema, rules=rules).wrong
    # a string column's bounds are read as null on each side, as the benchmark's scorer does
    pred = json.loads(json.dumps(truth))
    pred["column_max"]["city"] = 5
    del pred["column_min"]["city"]
    assert not label_output("d", truth, pred, schema=ds.schema, rules=rules).wrong
    # ...but not where the output calls the column numeric (then its type is wrong as well)
    pred["column_types"]["city"] = "int"
    pred["column_min"]["city"] = 3
    wrong = {f.path for f in label_output("d", truth, pred, schema=ds.schema, rules=rules).fields if f.wrong}
    assert wrong == {"column_types.city", "column_max.city", "column_min.city"}
    # a column only one side names is wrong; strings are exact; "" is not null; 2 == 2.0
    pred = json.loads(json.dumps(truth))
    pred["column_types"]["extra"] = "str"
    pred["identifier_first"] = "a-17"
    pred["column_max"]["pop"] = 709.0
    wrong = {f.path for f in label_output("d", truth, pred, schema=ds.schema, rules=rules).fields if f.wrong}
    assert wrong == {"column_types.extra", "identifier_first"}
    blank = ds.records[2].ground_truth
    assert label_output("d", blank, {**blank, "identifier_last": None}, schema=ds.schema, rules=rules).wrong


def test_the_rebuild_is_named_as_such_and_its_truth_is_the_rules(tmp_path):
    ds = load_dataset("data_table_rebuild", n=120, seed=0)
    assert ds.name == "data_table_rebuild" and "NOT its rows" in ds.notes and ds.source["kind"] == "table_rebuild"
    assert ds.source["package"] == "statsmodels==0.15.0" and "public domain" in ds.notes
    assert len(ds.records) == 120 and all(r.ground_truth == analyse_table(r.text) for r in ds.records)
    types = [set(r.ground_truth["column_types"].values()) for r in ds.records]
    assert sum("str" in t and len(t) > 1 for t in types) >= 30  # string and numeric columns together
    assert 20 <= sum(r.ground_truth["identifier_first"] is not None for r in ds.records) <= 100
    assert sum(any(c == "" for line in r.text.splitlines() for c in line.split(",")) for r in ds.records) >= 20
    assert all(r.text.splitlines()[0].split(",")[0] for r in ds.records)  # a header row
    again = reload_from_source(ds.source)
    assert [r.source_hash for r in again.records] == [r.source_hash for r in ds.records]
    assert load_dataset("data_table_rebuild", n=3, seed=1).records[0].text != ds.records[0].text
    with pytest.raises(DatasetError, match="n must be at least 1"):
        load_dataset("data_table_rebuild", n=0)


def test_the_rebuild_generates_and_labels_end_to_end(tmp_path):
    """A scripted generator answers the first table right and the second wrong, the third not as JSON."""
    ds = load_dataset("data_table_rebuild", n=3, seed=0)
    truths = {r.text: r.ground_truth for r in ds.records}
    texts = [r.text for r in ds.records]

    def reply(req):
        text = req.body["messages"][-1]["content"]
        if text == texts[2]:
            return Reply("rows: 5")
        truth = dict(truths[text])
        if text == texts[1]:
            truth["num_rows"] += 1
        return Reply(json.dumps(truth))

    run_dir = tmp_path / "run"
    with ScriptedServer(reply) as server:
        args = ["generate", "--run", str(run_dir), "--dataset", "data_table_rebuild", "--n", "3", "--seed", "0"]
        assert main([*args, "--base-url", server.base_url, "--model", "gen", "--quiet", "--no-cache"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    run = RunDir(run_dir, create=False)
    labels = {r["id"]: r for r in run.read("labels")}
    assert [labels[r.id]["wrong"] for r in ds.records] == [False, True, True]
    assert [f["path"] for f in labels[ds.records[1].id]["fields"] if f["wrong"]] == ["num_rows"]
    assert run.meta()["dataset"]["source"]["prompt"] == "benchmark"
    assert run.meta()["labels"]["rules"]["null_by_type"] == ["column_types", "str", ["column_max", "column_min"]]
