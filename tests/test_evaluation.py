"""evaluate and calibrate end to end: labels joined to judge ratings over real HTTP, tables and figures."""

from __future__ import annotations

import csv

import pytest

from construct_eval.cli import main
from construct_eval.data.datasets import load_dataset
from construct_eval.data.runs import RunDir
from construct_eval.reports.collect import collect
from construct_eval.reports.tables import detection_table, markdown_table
from construct_eval.serving.scripted_server import Reply, ScriptedServer


@pytest.fixture
def labelled_run(tmp_path):
    run_dir = tmp_path / "run"
    assert (
        main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "60", "--doc-error-rate", "0.3"]) == 0
    )
    assert main(["label", "--run", str(run_dir)]) == 0
    return run_dir


class PlantedJudge:
    """Rates every prompt about a wrong document 3 and every other 8: a judge with perfect document signal."""

    def __init__(self, wrong_texts: list[str]):
        self.wrong_texts = wrong_texts

    def __call__(self, req):
        prompt = "\n".join(m["content"] for m in req.body["messages"])
        rating = 3 if any(t in prompt for t in self.wrong_texts) else 8
        return Reply(f"Checked the values. Rating: [[{rating}]]")


def test_evaluate_and_calibrate_a_judged_run(labelled_run, capsys):
    run = RunDir(labelled_run, create=False)
    labels = {r["id"]: r["wrong"] for r in run.read("labels")}
    ds = load_dataset("synthetic", n=60)
    wrong_texts = [r.text for r in ds.records if labels[r.id]]
    with ScriptedServer(PlantedJudge(wrong_texts)) as server:
        args = ["score", "--run", str(labelled_run), "--mode", "doc,fields", "--constrained", "none"]
        args += ["--base-url", server.base_url, "--model", "judge", "--backend", "generic", "--quiet", "--no-cache"]
        assert main(args) == 0
    assert main(["evaluate", "--run", str(labelled_run), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "0 outputs did not parse" in out
    with (labelled_run / "metrics" / "detection.csv").open() as fh:
        rows = {(r["level"], r["scorer"]): r for r in csv.DictReader(fh)}
    doc = rows[("document", "judge-doc")]
    assert int(doc["n"]) == 60 and float(doc["prevalence"]) == pytest.approx(0.3)
    assert float(doc["auroc"]) == 1.0 and float(doc["precision@20%"]) == 1.0
    field = rows[("field", "judge-field")]
    assert 0.5 < float(field["auroc"]) < 1.0  # every field of a wrong document is rated low, right or not
    assert float(rows[("document", "judge-field:min")]["auroc"]) == 1.0
    assert (labelled_run / "figures" / "roc_document.png").stat().st_size > 10_000
    with (labelled_run / "metrics" / "detection_by_output_kind.csv").open() as fh:
        kinds = {r["fields"]: r for r in csv.DictReader(fh) if r["scorer"] == "judge-field"}
    assert int(kinds["all"]["n"]) == int(field["n"])
    assert int(kinds["all"]["n"]) == sum(int(kinds[k]["n"]) for k in ("null or empty", "value") if k in kinds)
    assert (labelled_run / "metrics" / "detection.md").read_text().startswith("## Error detection")
    with (labelled_run / "metrics" / "parse_rules.csv").open() as fh:
        rules = {(r["mode"], r["rule"]): int(r["judgments"]) for r in csv.DictReader(fh)}
    n_fields = int(field["n"])
    assert rules == {("doc", "rating_prefix"): 60, ("field", "rating_prefix"): n_fields}
    with (labelled_run / "metrics" / "thresholds_document_judge-doc.csv").open() as fh:
        thresholds = list(csv.DictReader(fh))
    assert [float(r["threshold"]) for r in thresholds] == [3.0, 8.0]
    assert float(thresholds[0]["recall"]) == 1.0 and float(thresholds[0]["precision"]) == 1.0

    assert main(["calibrate", "--run", str(labelled_run), "--methods", "isotonic,platt"]) == 0
    with (labelled_run / "metrics" / "calibration.csv").open() as fh:
        cal_rows = list(csv.DictReader(fh))
    # the document rating takes two values (3 and 8): read per value, no curve fitted through two points
    doc = next(r for r in cal_rows if r["scorer"] == "judge-doc")
    assert doc["method"] == "not fitted: 2 distinct scores" and doc["brier"] == ""
    with (labelled_run / "metrics" / "values_document_judge-doc.csv").open() as fh:
        values = {float(r["value"]): r for r in csv.DictReader(fh)}
    assert float(values[3.0]["error_rate"]) == 1.0 and float(values[8.0]["error_rate"]) == 0.0
    assert float(values[3.0]["naive"]) == pytest.approx(7 / 9, abs=1e-4)
    # a score with many values is fitted: the field-prior baseline (it uses the labels)
    prior = {r["method"] for r in cal_rows if r["scorer"] == "field-prior-uses-labels@top"}
    assert prior == {"isotonic", "platt", "platt-per-field"}
    assert list((labelled_run / "figures").glob("reliability_*.png"))
    assert (labelled_run / "figures" / "values_document_judge-doc.png").exists()


def test_unscored_and_unlabelled_items_are_counted_not_scored(labelled_run):
    run = RunDir(labelled_run, create=False)
    first = run.read("records")[0]["id"]
    rows = [
        {"id": first, "scorer": "custom", "field": "__doc__", "score": None, "reason": "no log-probs"},
        {"id": "not-a-document", "scorer": "custom", "field": "__doc__", "score": 0.5},
    ]
    rows += [{"id": r["id"], "scorer": "custom", "field": "__doc__", "score": 0.5} for r in run.read("records")[1:]]
    run.append("scores", rows)
    (items,) = [i for i in collect(run) if i.scorer == "custom"]
    assert (items.n, items.unscored, items.unlabelled) == (59, 1, 1)
    (row,) = detection_table([items], n_boot=50)
    assert row["auroc"] == 0.5 and row["unscored"] == 1 and row["distinct_scores"] == 1


def test_evaluate_without_labels_says_what_to_do(tmp_path, capsys):
    run_dir = tmp_path / "r"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "5"]) == 0
    assert main(["evaluate", "--run", str(run_dir)]) == 2
    assert "construct-eval label" in capsys.readouterr().err


def test_markdown_escapes_pipes_in_names():
    text = markdown_table([{"scorer": "judge-doc[sec:r-s-o|fields:reversed]", "auroc": 0.51234}])
    assert "sec:r-s-o\\|fields" in text and "0.512" in text


def test_subset_and_compare_two_judges_side_by_side(labelled_run, capsys):
    """A planted perfect judge and a flat one: compare tells them apart; a subset keeps what was made."""
    run = RunDir(labelled_run, create=False)
    labels = {r["id"]: r["wrong"] for r in run.read("labels")}
    ds = load_dataset("synthetic", n=60)
    wrong_ids = [i for i, w in labels.items() if w][:4]
    right_ids = [i for i, w in labels.items() if not w][:6]
    subset = labelled_run.parent / "subset"
    assert (
        main(["subset", "--run", str(labelled_run), "--out", str(subset), "--docs", ",".join(wrong_ids + right_ids)])
        == 0
    )
    sub = RunDir(subset, create=False)
    assert [r["id"] for r in sub.read("records")] == [i for i in labels if i in set(wrong_ids + right_ids)]
    assert len(sub.read("labels")) == len(sub.read("outputs")) == 10
    assert sub.meta()["subset_of"]["documents"] == wrong_ids + right_ids
    assert sub.meta()["labels"]["rules_hash"] == run.meta()["labels"]["rules_hash"]
    # a second subset into the same folder, or an unknown id, is refused with the reason
    assert main(["subset", "--run", str(labelled_run), "--out", str(subset), "--docs", wrong_ids[0]]) == 2
    assert main(["subset", "--run", str(labelled_run), "--out", str(subset) + "2", "--docs", "nope"]) == 2
    assert "no document 'nope'" in capsys.readouterr().err

    flat = labelled_run.parent / "flat"
    run.copy_subset(flat, wrong_ids + right_ids, files=["records", "outputs", "labels"])
    assert not (flat / "judgments.jsonl").exists()
    wrong_texts = [r.text for r in ds.records if labels[r.id]]
    judges = {subset: PlantedJudge(wrong_texts), flat: lambda req: Reply("Looks fine. Rating: [[9]]")}
    for folder, judge in judges.items():
        with ScriptedServer(judge) as server:
            args = ["score", "--run", str(folder), "--mode", "doc", "--constrained", "none", "--quiet", "--no-cache"]
            args += ["--base-url", server.base_url, "--model", folder.name, "--backend", "generic"]
            assert main(args) == 0
    capsys.readouterr()
    out = labelled_run.parent / "cmp" / "models"
    assert main(["compare", str(subset), str(flat), "--out", str(out), "--n-boot", "100"]) == 0
    with out.with_suffix(".csv").open() as fh:
        rows = {r["run"]: r for r in csv.DictReader(fh)}
    assert float(rows["subset"]["auroc_rating"]) == 1.0
    assert rows["subset"]["ratings"] == "3:4 8:6"
    assert rows["flat"]["ratings"] == "9:10" and float(rows["flat"]["modal_rating_share"]) == 1.0
    assert float(rows["flat"]["auroc_rating"]) == 0.5
    assert rows["flat"]["constrained"] == "none" and float(rows["flat"]["unscored_rate"]) == 0.0
    assert "| subset |" in out.with_suffix(".md").read_text()


def test_long_scorer_names_make_short_distinct_file_names():
    from construct_eval.reports.tables import file_slug

    a = "combo:rank-mean[" + "+".join(f"judge-doc[sec:o-s-r|fields:v{i}]:expected" for i in range(8)) + "]"
    b = a.replace("v7", "v8")
    assert len(file_slug(a)) <= 80 and len(file_slug(b)) <= 80 and file_slug(a) != file_slug(b)
    assert file_slug("judge-doc[sec:r-s-o|fields:original]") == "judge-doc_sec_r-s-o_fields_original_"


def test_field_ratings_at_two_granularities_are_kept_apart(labelled_run):
    """Each judgment records the granularity of its field; leaf and top ratings are different scorers."""
    with ScriptedServer(PlantedJudge([])) as server:
        common = ["--run", str(labelled_run), "--mode", "fields", "--constrained", "none", "--limit", "5"]
        common += ["--base-url", server.base_url, "--model", "judge", "--backend", "generic", "--quiet", "--no-cache"]
        assert main(["score", *common]) == 0
        assert main(["score", *common, "--granularity", "leaf"]) == 0
    rows = RunDir(labelled_run, create=False).read("judgments")
    assert {r["granularity"] for r in rows} == {"top", "leaf"}
    top = sum(r["granularity"] == "top" for r in rows)
    items = {(i.level, i.scorer): i for i in collect(RunDir(labelled_run, create=False))}
    assert items[("field", "judge-field")].granularity == "top"
    assert items[("field", "judge-field")].n + items[("field", "judge-field")].unscored == top
    assert items[("field", "judge-field@leaf")].granularity == "leaf"
    assert items[("field", "judge-field@leaf")].n > items[("field", "judge-field")].n


def test_a_second_elicitation_is_its_own_scorer_and_the_first_keeps_its_name(labelled_run):
    """A run judged with the rating forced and then with the free recipe, same prompt order:
    the forced rows keep the plain names (every recorded table stays put), the free ones are
    tagged, and neither overwrites the other as a repeated item."""
    import json
    import warnings

    run = RunDir(labelled_run, create=False)
    ids = [r["id"] for r in run.read("labels")]
    rows = []
    for constrained, rating in (("grammar:rating-only", 5), ("none", 8)):
        for doc_id in ids:
            rows.append(
                {
                    "doc_id": doc_id,
                    "id": doc_id,
                    "field": "__doc__",
                    "mode": "doc",
                    "rating": rating,
                    "status": "ok",
                    "expected_rating": rating + 0.5,
                    "constrained": constrained,
                    "call_id": f"{constrained}-{doc_id}",
                }
            )
    (labelled_run / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "repeat an item already seen"
        items = {it.scorer: it for it in collect(run)}
    assert set(items) >= {"judge-doc", "judge-doc[sec:r-s-o|fields:original|ask:free]"}
    assert set(items["judge-doc"].scores) == {5.0}
    assert set(items["judge-doc[sec:r-s-o|fields:original|ask:free]"].scores) == {8.0}
    assert items["judge-doc"].n == len(ids)


def test_the_forced_and_the_free_rating_are_paired_on_the_same_documents(labelled_run, capsys):
    """bias --across elicitations: how the way of asking moves the rating, on the documents
    asked both ways (one asked only one way is left out and counted), with each one's scale use."""
    import csv
    import json

    from construct_eval.cli import main

    ids = [r["id"] for r in RunDir(labelled_run, create=False).read("labels")]
    rows = []
    for constrained, ratings in (("grammar:rating-only", [5] * len(ids)), ("none", [8, 9, 2] * len(ids))):
        for doc_id, rating in zip(ids, ratings[: len(ids)], strict=True):
            row = {"doc_id": doc_id, "field": "__doc__", "mode": "doc", "rating": rating, "status": "ok"}
            row.update(variant="sec:r-s-o|fields:original", constrained=constrained, call_id=f"{constrained}{doc_id}")
            rows.append(row)
    rows.pop()  # the last document has no free rating
    (labelled_run / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["bias", "--run", str(labelled_run), "--variants", "default", "--across", "elicitations"]) == 0
    assert f"{len(ids) - 1} items rated under all 2 ways of asking (1 incomplete)" in capsys.readouterr().out
    with (labelled_run / "metrics" / "elicitation_pairs_doc.csv").open() as fh:
        (pair,) = list(csv.DictReader(fh))
    free = [8, 9, 2] * len(ids)
    expected_shift = sum(free[: len(ids) - 1]) / (len(ids) - 1) - 5
    assert (pair["variant_a"], pair["variant_b"]) == ("grammar:rating-only", "none")
    assert float(pair["mean_shift"]) == pytest.approx(expected_shift)
    assert pair["use_a"] == "flat (5:100%)" and pair["use_b"].startswith("varying")
    assert float(pair["share_changed"]) == 1.0


def test_figures_none_makes_the_same_tables_and_no_figures_and_the_cache_gives_the_same_items(labelled_run, tmp_path):
    """``--figures none``: every table, no figure, no figure index; the collected items kept beside
    the run are the items collected from the JSONL."""
    from construct_eval.reports import collect as collect_module

    run = RunDir(labelled_run, create=False)
    items = [(i.key, i.doc_ids, i.fields, i.scores, i.wrong, i.left_out) for i in collect(run)]
    cache = labelled_run / ".analysis_cache" / "collected-labels.npz"
    assert cache.exists() and (cache.parent / ".gitignore").read_text() == "*\n"
    collect_module.collect.cache_clear()  # the next collection reads the arrays, not the JSONL
    again = [(i.key, i.doc_ids, i.fields, i.scores, i.wrong, i.left_out) for i in collect(run)]
    assert again == items
    for it in collect(run):  # the arrays made from the kept codes are the ones the lists make
        fresh = collect_module.ScoredItems(
            it.scorer, it.level, it.granularity, list(it.doc_ids), list(it.fields), list(it.scores), list(it.wrong)
        )
        for kept, made in zip(it.columns(), fresh.columns(), strict=True):
            assert kept.dtype == made.dtype and kept.tolist() == made.tolist()
    with_figures, without = tmp_path / "all", tmp_path / "none"
    for out, which in ((with_figures, "all"), (without, "none")):
        for command in ("evaluate", "calibrate"):
            argv = [command, "--run", str(labelled_run), "--out", str(out), "--figures", which]
            assert main([*argv, "--n-boot", "50"] if command == "evaluate" else argv) == 0
    tables = sorted(p.name for p in (with_figures / "metrics").iterdir())
    assert tables == sorted(p.name for p in (without / "metrics").iterdir())
    for name in tables:
        assert (with_figures / "metrics" / name).read_text() == (without / "metrics" / name).read_text()
    assert list((with_figures / "figures").glob("*.png")) and not (without / "figures").exists()


def test_a_level_with_one_class_gets_no_value_table_and_an_old_one_is_removed(tmp_path):
    """Every document wrong: each value of a score reads "100% wrong", a table with no message;
    calibrate writes none, and removes one an earlier version wrote."""
    from tests.conftest import injected_run

    run = injected_run(tmp_path / "run", 20, 1.0)
    assert all(r["wrong"] for r in run.iter_rows("labels"))
    stale = [
        run.path / "metrics" / "values_document_plausibility.md",
        run.path / "figures" / "values_document_plausibility.png",
    ]
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("an earlier version's table")
    assert main(["calibrate", "--run", str(run.path), "--methods", "isotonic,platt", "--figures", "none"]) == 0
    values = sorted(p.name for p in (run.path / "metrics").glob("values_*"))
    assert not [v for v in values if v.startswith("values_document")], values
    assert "| field |" in (run.path / "metrics" / "calibration.md").read_text()  # fields hold both classes
    assert not any(p.exists() for p in stale)
