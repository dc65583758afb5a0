"""The findings are true cell by cell.

``construct_eval.studies.findings`` writes ``results/FINDINGS.md``, the README's findings block and
``results/FINDINGS.cells.csv`` (every quoted cell: table, row, column, format, text). Here every
quoted cell is read again with the standard library, by its row and column (not by looking for
the number anywhere in the table, which cannot see a number attached to the wrong row), the
written files must be what the script writes now, and the prose may hold no decimal number that
is not one of the quoted cells.
"""

from __future__ import annotations

import csv
import importlib
import json
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CELLS = ROOT / "results" / "FINDINGS.cells.csv"


def _findings_module():
    return importlib.import_module("construct_eval.studies.findings")


def _cells() -> list[dict[str, str]]:
    with CELLS.open(newline="") as f:
        return list(csv.DictReader(f))


def _format(x: float, fmt: str) -> str:
    """Formats written out again here, not imported, so a wrong formatter cannot agree with itself."""
    if math.isnan(x):
        return "n/a"
    text = {
        "3f": f"{x:.3f}",
        "+3f": f"{x:+.3f}",
        "+4f": f"{x:+.4f}",
        "4f": f"{x:.4f}",
        "2f": f"{x:.2f}",
        "1f": f"{x:.1f}",
        # a share as its table prints it (0.0375 -> 0.037), then in percent: 3.7%, as the reader of the table sees
        "pct1": f"{float(f'{x:.3f}') * 100:.1f}%",
        "pct0": f"{float(f'{x:.2f}') * 100:.0f}%",
        "int": f"{round(x):,}",
        "p": "< 0.0005" if x < 0.0005 else f"= {x:.3f}",
        # a p-value at the bootstrap's floor, as a bound: rounded up, never below the value
        "p_bound": f"<= {math.ceil(round(x * 1000, 6)) / 1000:.3f}",
    }[fmt]
    if re.fullmatch(r"-[0.,]+%?", text):  # a negative number that rounds to zero is written without its minus
        text = ("+" if fmt.startswith("+") else "") + text[1:]
    return text


def test_the_written_findings_are_what_the_script_writes_now():
    assert _findings_module().main(["--check"]) == 0, "run: .venv/bin/python -m construct_eval.studies.findings"


@pytest.mark.parametrize("row", _cells(), ids=lambda r: f"{Path(r['table']).parent.parent.name}:{r['column']}")
def test_every_quoted_cell_is_the_cell_of_its_row_and_column(row):
    where = dict(part.partition("=")[::2] for part in row["where"].split("; "))
    with (ROOT / row["table"]).open(newline="") as f:
        hits = [r for r in csv.DictReader(f) if all(r[k] == v for k, v in where.items())]
    assert len(hits) == 1, f"{row['table']}: {len(hits)} rows match {where}"
    raw = hits[0][row["column"]]
    expected = raw if row["format"] == "text" else _format(float(raw), row["format"])
    assert expected == row["quoted"]


def _readme_block() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("<!-- findings: written by", 1)[1].split("<!-- findings: end -->", 1)[0]


@pytest.mark.parametrize("where", ["FINDINGS.md", "README.md"])
def test_the_prose_quotes_no_number_that_is_not_a_cell(where):
    if where == "FINDINGS.md":
        findings = (ROOT / "results" / "FINDINGS.md").read_text().split("\n- ", 1)[1]
    else:
        findings = _readme_block()
    prose = re.sub(r"\]\([^)]*\)", "]", findings)  # not the numbers in link targets
    number = re.compile(r"(?<![\w.])\d+(?:,\d{3})*\.\d+(?![\w.])|(?<![\w.])\d{1,3}(?:,\d{3})+(?![\w.])")
    quoted = {n for c in _cells() for n in number.findall(c["quoted"])}
    typed = [n for n in number.findall(prose) if n not in quoted]
    assert not typed, f"numbers in {where} that are not quoted cells: {typed}"


def test_the_readme_shows_the_main_findings_briefly():
    """Five to eight findings, each a short bullet (its title, the numbers that carry it, its links),
    read by a newcomer in a minute: at most about 60 words; every other number and caveat stays in
    FINDINGS.md, which each bullet links to. The first is the paper's question, the second its
    positive control."""
    bullets = [b.split("\n\n", 1)[0] for b in _readme_block().split("\n- **")[1:]]  # a paragraph may follow the list
    assert 5 <= len(bullets) <= 8
    for bullet in bullets:
        words = len(re.sub(r"\]\([^)]*\)", "]", bullet).split())
        assert words <= 65, f"{words} words: {bullet[:80]}"
        assert "[in full](results/FINDINGS.md)" in bullet
    assert "CONSTRUCT (its authors' TLM 0.0.3" in bullets[0] and bullets[1].startswith("A positive control")


def test_a_study_still_running_is_named_under_the_list_until_its_finding_joins_it():
    """The README says the paper's comparison is under way exactly while its finding is interim."""
    block = _readme_block()
    interim = "Interim, on" in (ROOT / "results" / "FINDINGS.md").read_text()
    assert ("is under way" in block) == interim
    assert ("a 1.5b model extracted, construct (its authors' tlm 0.0.3" in block.lower()) == (not interim)


@pytest.mark.parametrize(
    "x,fmt,text",
    [
        (-0.0004, "3f", "0.000"),
        (-0.0004, "+3f", "+0.000"),
        (-0.0014, "+3f", "-0.001"),
        (-0.0001, "pct1", "0.0%"),
        (0.0004, "+3f", "+0.000"),
        (-0.2, "int", "0"),
    ],
)
def test_a_number_that_rounds_to_zero_carries_no_minus_sign(x, fmt, text):
    from construct_eval.reports.cells import format_value

    assert format_value(x, fmt) == text


# --- statements that must not claim more than their evidence (issue 60) -------------------------

RUNS = "results/runs"
MAIN = f"{RUNS}/financial_ner-sample600-controlled30"
NATURAL = f"{RUNS}/natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"
COUNTS = ROOT / "results" / "FINDINGS.counts.csv"


def _rows(table: str | Path) -> list[dict[str, str]]:
    with (ROOT / table).open(newline="") as f:
        return list(csv.DictReader(f))


def _one(table: str | Path, **where: str) -> dict[str, str]:
    hits = [r for r in _rows(table) if all(r[k] == v for k, v in where.items())]
    assert len(hits) == 1, f"{table}: {len(hits)} rows match {where}"
    return hits[0]


def _jsonl(path: Path) -> list[dict]:
    with path.open() as f:
        return [json.loads(line) for line in f if line.strip()]


def _finding(title_start: str) -> str:
    """The FINDINGS.md bullet whose title starts so."""
    bullets = (ROOT / "results" / "FINDINGS.md").read_text().split("\n- **")[1:]
    hits = [b for b in bullets if b.startswith(title_start)]
    assert len(hits) == 1, f"{len(hits)} findings start with {title_start!r}"
    return hits[0]


def _readme_bullet(title_start: str) -> str:
    hits = [b for b in _readme_block().split("\n- **")[1:] if b.startswith(title_start)]
    assert len(hits) == 1, f"{len(hits)} README findings start with {title_start!r}"
    return hits[0]


def _interval(row: dict[str, str], column: str = "auroc") -> str:
    return " ".join(
        [
            _format(float(row[column]), "3f"),
            f"[{_format(float(row[column + '_low']), '3f')},",
            f"{_format(float(row[column + '_high']), '3f')}]",
        ]
    )


def _holm_family(table: str, column: str, row: dict[str, str]) -> tuple[int, int]:
    """(resamples, tests) of a Holm-adjusted p-value, read here again from the table and beside it."""
    rows = _rows(table)
    if column == "p_holm":  # a paired table: one family, every row with a p; its resamples in the Markdown title
        title = (ROOT / table).with_suffix(".md").read_text().splitlines()[0]
        return int(re.search(r"([\d,]+) document resamples", title)[1].replace(",", "")), sum(1 for r in rows if r["p"])
    # the paper comparison: Holm within the family its <metric>_holm_family column names
    family = row.get(column.replace("_p_holm", "_holm_family"), "")
    tests = sum(
        1
        for r in rows
        for k, v in r.items()
        if k.endswith("_p_holm") and v and r.get(k.replace("_p_holm", "_holm_family"), "") == family
    )
    return int(float(row["n_boot"])), tests


HOLM = [r for r in _cells() if r["column"].endswith("p_holm")]


@pytest.mark.parametrize("row", HOLM, ids=lambda r: f"{Path(r['table']).parent.parent.name}:{r['where']}")
def test_a_holm_p_at_the_resampling_floor_is_written_as_a_bound_and_names_its_tests(row):
    """The smallest p B resamples give is 2 / (B + 1); Holm over m tests makes it m times that. A
    p-value there is a bound ("p <= 0.013 after Holm over 13 tests"); above it, a value."""
    hit = _one(row["table"], **dict(part.partition("=")[::2] for part in row["where"].split("; ")))
    resamples, tests = _holm_family(row["table"], row["column"], hit)
    p = float(hit[row["column"]])
    at_floor = math.isclose(p, min(1.0, tests * 2 / (resamples + 1)), rel_tol=1e-9)
    assert (row["format"] == "p_bound") == at_floor, f"{p} with {tests} tests over {resamples} resamples"
    if at_floor:
        assert float(row["quoted"].removeprefix("<= ")) >= p  # a bound is never below the value
    text = (ROOT / "results" / "FINDINGS.md").read_text() + _readme_block()
    assert f"p {row['quoted']} after Holm over {tests} tests" in text


def test_no_holm_p_is_written_without_its_number_of_tests():
    text = (ROOT / "results" / "FINDINGS.md").read_text().split("\n- ", 1)[1] + _readme_block()
    assert "Holm p" not in text
    assert text.count("after Holm") == len(re.findall(r"\bp (?:<=|=|<) [\d.]+ after Holm over \d+ tests", text)) > 0


def test_a_p_bound_rounds_up():
    bound = _findings_module().p_bound
    assert bound(13 * 2 / 2001) == "<= 0.013"
    assert bound(0.01234) == "<= 0.013"
    assert bound(0.015) == "<= 0.015"


DECISIONS = "On planted financial-entity errors, only a label-free value check earns a per-field"


def test_the_guarantee_is_checked_on_the_run_as_population_beside_the_noisier_test_half():
    validity = f"{MAIN}/metrics/decision_validity.csv"
    field = _one(validity, level="field", scorer="plausibility@leaf", alpha="0.05")
    doc = _one(validity, level="document", scorer="plausibility", alpha="0.1")

    def pct(row: dict[str, str], column: str) -> str:
        return _format(float(row[column]), "pct1")

    bullet, short = _finding(DECISIONS), _readme_bullet(DECISIONS)
    splits = _format(float(field["splits"]), "int")
    population = f"the threshold went over 5% in {pct(field, 'violation_rate_run_as_population')} of {splits} draws"
    assert population in bullet
    assert (
        f"the naive rule's (the lowest threshold whose calibration risk is at most alpha) in {pct(field, 'naive_violation_rate_run_as_population')}"
        in bullet
    )
    assert "A test half's realised share is a noisier check" in bullet
    # the two ways of checking the bound are its tests; "the checks" are the plausibility checks
    assert "the two tests of the bound disagree: the plausibility checks' threshold" in bullet
    assert "the two checks" not in bullet
    assert f"the threshold went over 5% in {pct(field, 'violation_rate')} of splits" in bullet
    assert (
        f"went over alpha in {pct(doc, 'violation_rate_run_as_population')} of draws with the run as the population "
        f"and in {pct(doc, 'violation_rate')} of test halves"
    ) in bullet
    assert f"the threshold exceeded 5% in {pct(field, 'violation_rate_run_as_population')} of {splits} draws" in short
    assert pct(doc, "violation_rate") not in short  # the per-document test-half rate only beside its population check


def test_what_the_checks_accept_is_counted_again_from_the_run_files():
    """Recounted from the labels (an empty output is a field labelled both null or missing) and the
    checks' scores, without the package: most of what the checks accept is empty outputs."""
    run = ROOT / MAIN
    threshold = float(
        _one(f"{MAIN}/metrics/decision_thresholds.csv", level="field", scorer="plausibility@leaf", alpha="0.05")[
            "threshold"
        ]
    )
    labels = {
        (r["id"], f["path"]): (bool(f["wrong"]), f["reason"] in ("both_null", "missing_value"))
        for r in _jsonl(run / "labels.jsonl")
        for f in r["fields"]
    }
    scores = {
        (r["id"], r["field"]): r["score"] for r in _jsonl(run / "plausibility.jsonl") if r.get("granularity") == "leaf"
    }
    assert set(scores) == set(labels)
    accepted = [k for k, s in scores.items() if s >= threshold]
    empty = sum(labels[k][1] for k in accepted)
    filled = [k for k in accepted if not labels[k][1]]
    filled_wrong = sum(labels[k][0] for k in filled)
    counts = {r["key"]: r for r in _rows(COUNTS)}
    assert (int(counts["checks accept"]["count"]), int(counts["checks accept"]["of"])) == (len(accepted), len(scores))
    assert (
        int(counts["checks accept: empty outputs"]["count"]),
        int(counts["checks accept: empty outputs"]["of"]),
    ) == (empty, len(accepted))
    wrong = counts["checks accept: filled fields wrong"]
    assert (int(wrong["count"]), int(wrong["of"])) == (filled_wrong, len(filled))
    bullet = _finding(DECISIONS)
    assert (
        f"of the {len(accepted):,} fields they accept, {_format(empty / len(accepted), 'pct0')} ({empty:,}) are empty outputs"
    ) in bullet
    assert (
        f"the {len(filled):,} filled fields they accept are wrong {_format(filled_wrong / len(filled), 'pct1')} of the time ({filled_wrong})"
        in bullet
    )
    short = _readme_bullet(DECISIONS)
    assert f"{_format(empty / len(accepted), 'pct0')} of them empty" in short


def _links_a_planted_run(bullet: str) -> bool:
    return any(("controlled" in t or "nearmiss" in t) for t in re.findall(r"\]\(([^)]*)\)", bullet))


@pytest.mark.parametrize("where", ["FINDINGS.md", "README.md"])
def test_every_finding_that_reads_the_checks_on_planted_errors_says_how_they_were_built_and_how_they_do_on_real_errors(
    where,
):
    """The checks were built knowing the planted kinds; on a generator's real errors (three runs)
    they range from helpful to below chance within filled fields: every finding that praises them
    on planted errors says both, FINDINGS with each run's interval, the README with the two ends."""
    runs = (
        "financial_ner-sample200",
        NATURAL.split("/")[-1],
        "natural-data_table_rebuild-qwen2.5-coder-1.5b-benchmark",
    )
    rows = [
        _one(f"{RUNS}/{run}/metrics/detection_by_output_kind.csv", scorer="plausibility@top", granularity="top",
             fields="value")
        for run in runs
    ]  # fmt: skip
    aurocs = sorted(float(r["auroc"]) for r in rows)
    if where == "FINDINGS.md":
        bullets = (ROOT / "results" / "FINDINGS.md").read_text().split("\n- **")[1:]
    else:
        bullets = _readme_block().split("\n- **")[1:]
    praised = [b for b in bullets if _links_a_planted_run(b) and re.search(r"\bchecks\b", b)]
    assert praised, "no finding reads the checks on planted errors"
    for bullet in praised:
        assert "built knowing" in bullet, bullet[:80]
        if where == "FINDINGS.md":
            for r in rows:
                assert _interval(r) in bullet, (bullet[:80], _interval(r))
        else:
            assert f"from {_format(aurocs[-1], '3f')} (" in bullet and f"to {_format(aurocs[0], '3f')} (" in bullet, (
                bullet[:80]
            )
        assert ("below chance" in bullet) == (min(float(r["auroc_high"]) for r in rows) < 0.5)


def test_isotonic_is_fitted_decreasing_only_as_the_finding_says():
    """The package's isotonic map cannot rise: on errors that rise with the score it pools every
    score into one value, where Platt scaling follows them."""
    import numpy as np

    from construct_eval.stats import calibrators

    score = np.linspace(0.0, 1.0, 200)
    wrong = (score > 0.5).astype(float)
    iso = calibrators.make_calibrator("isotonic").fit(score, wrong).predict(score)
    platt = calibrators.make_calibrator("platt").fit(score, wrong).predict(score)
    assert np.ptp(iso) < 1e-9
    assert platt[-1] > platt[0] + 0.5
    bullet = _finding("On planted financial-entity errors, a 1.5B judge's rating is not a probability")
    assert (
        "fitted here as a decreasing map (a higher rating can never mean more errors)" in bullet
        and "Platt scaling, fitted in either direction" in bullet
    )


def test_histogram_binning_is_named_where_its_out_of_fold_brier_is_lowest():
    calibration = f"{MAIN}/metrics/calibration.csv"
    brier = {
        m: _one(calibration, level="field", scorer="judge-field:expected", method=m)
        for m in ("histogram", "isotonic", "platt")
    }
    h, i, p = (_format(float(brier[m]["brier"]), "3f") for m in ("histogram", "isotonic", "platt"))
    n = _format(float(brier["histogram"]["n"]), "int")
    wins = float(brier["histogram"]["brier"]) < min(float(brier["isotonic"]["brier"]), float(brier["platt"]["brier"]))
    bullet, short = (
        _finding("On planted financial-entity errors, a 1.5B judge's rating is not a probability"),
        _readme_bullet("On planted financial-entity errors, a 1.5B judge's rating is not a probability"),
    )
    assert (f"{h} over {n} fields, against isotonic's {i} and Platt's {p}" in bullet) == wins
    assert "histogram" not in short  # the README's bullet gives the per-value reading instead (below)


def test_the_per_value_reading_is_quoted_from_its_row_with_the_paired_difference_from_the_base_rate():
    row = _one(
        f"{MAIN}/metrics/rating_readings.csv", level="field", scorer="judge-field", reading="per value (out of fold)"
    )
    brier = _format(float(row["brier"]), "3f")
    diff = ", ".join(_format(float(row[c]), "3f") for c in ("base_diff_low", "base_diff_high"))
    beats = float(row["base_diff_high"]) < 0
    short = _readme_bullet("On planted financial-entity errors, a 1.5B judge's rating is not a probability")
    said = f"each value's own rate moves the base rate's Brier score by {float(row['brier_minus_base_rate']):+.3f} [{diff}]"
    assert (said in short) == beats
    assert ("Each value's own error rate beats the base rate" in short) == beats
    assert (
        f"Read value by value (each value's share wrong in the training folds, no order imposed) it reaches {brier}"
        in (_finding("On planted financial-entity errors, a 1.5B judge's rating is not a probability"))
        or not beats
    )


def test_the_natural_studys_error_patterns_and_balanced_sample_are_counted_again_from_its_run_files():
    """The wrong top-level fields of the notices judged (the first of the balanced order: wrong and
    right alternately), recounted from labels, records and outputs without the package."""
    run = ROOT / NATURAL
    detection = f"{NATURAL}/metrics/detection.csv"
    judged_fields = _one(detection, level="field", scorer="reflection@top")
    judged = int(judged_fields["documents"])
    parsed = [r for r in _jsonl(run / "labels.jsonl") if not r.get("parse_failed")]
    wrong_ids = [r["id"] for r in parsed if r["wrong"]]
    right_ids = [r["id"] for r in parsed if not r["wrong"]]
    order = [
        i for k in range(max(len(wrong_ids), len(right_ids))) for i in (wrong_ids[k : k + 1] + right_ids[k : k + 1])
    ]
    labels = {r["id"]: r for r in parsed}
    records = {r["id"]: r for r in _jsonl(run / "records.jsonl")}
    outputs = {r["id"]: r["output"] for r in _jsonl(run / "outputs.jsonl") if r.get("sample", 0) == 0}
    wrong = contact = greeted = grams = 0
    for doc in order[:judged]:
        by_top: dict[str, set[str]] = {}
        for f in labels[doc]["fields"]:
            if f["wrong"]:
                by_top.setdefault(re.split(r"[.\[]", f["path"], maxsplit=1)[0], set()).add(f["path"])
        wrong += len(by_top)
        truth, output, text = records[doc]["ground_truth"], outputs[doc], records[doc]["request"]
        if by_top.get("destination") == {"destination.contact"}:
            contact += 1
            name = truth["destination"]["contact"]
            greeted += (f"Attn: {name}" in text or f"Dear {name}," in text) and output["destination"].get(
                "contact"
            ) in (None, "")
        if "packages" in by_top and all(re.fullmatch(r"packages\[\d+\]\.weight_kg", p) for p in by_top["packages"]):
            pairs = list(zip(output["packages"], truth["packages"], strict=False))
            grams += len(output["packages"]) == len(truth["packages"]) and all(
                o["weight_kg"] in (t["weight_kg"], round(1000 * t["weight_kg"])) for o, t in pairs
            )
    assert wrong == int(judged_fields["positives"])
    counts = {r["key"]: r for r in _rows(COUNTS)}
    assert int(counts["natural: wrong fields"]["count"]) == wrong
    assert int(counts["natural: destination contact"]["count"]) == contact
    assert int(counts["natural: contact named only by Attn or Dear"]["count"]) == greeted
    assert int(counts["natural: weights in grams"]["count"]) == grams
    bullet = (
        _finding("Interim, on")
        if "Interim, on" in (ROOT / "results" / "FINDINGS.md").read_text()
        else _finding("On shipping notices a 1.5B model extracted")
    )
    assert f"of the {wrong} wrong top-level fields of the {judged} notices judged" in bullet
    assert (
        f'{contact} are the destination\'s contact ({greeted} of them a contact the notice names only on an "Attn:" line'
        in bullet
    )
    assert f"and {grams} package weights the notice gives in grams, not converted to kilograms" in bullet
    judged_docs = _one(detection, level="document", scorer="reflection")
    every = _one(detection, level="document", scorer="token_logprob")
    assert f"{judged_docs['positives']} of {judged_docs['n']} for the reflection prompts and samples" in bullet
    assert f"where the run's are {_format(float(every['prevalence']), 'pct0')}" in bullet
    assert f"at about {_format(float(judged_docs['prevalence']), 'pct0')} prevalence, not the run's" in bullet
    rule = _one(detection, level="document", scorer="contact_rule")
    assert (
        f"AUROC {_interval(rule)} per notice on all {rule['n']}, but it was written after seeing these errors" in bullet
    )


def test_the_readme_figure_is_captioned_with_its_message_from_the_manifest():
    """The README's figure caption is the figure's own message (computed from the stored tables
    when the figure is made), so a remade figure cannot leave an old claim under it."""
    import json

    from construct_eval.studies.findings import README_FIGURE

    entry = json.loads((ROOT / "results" / "figures" / "manifest.json").read_text())["files"][f"{README_FIGURE}.png"]
    readme = (ROOT / "README.md").read_text()
    assert f"(results/figures/{README_FIGURE}.png)" in readme
    assert f"*{entry['headline']}. " in readme  # its first clause: one message
    # the stored parts are the message: the answer opens with the headline, the sentences after it
    assert entry["answer"].startswith(entry["headline"]) and len(entry["headline"]) < len(entry["answer"])
    assert " ".join([entry["answer"], *entry["also"]]) == entry["message"]


def test_the_rating_finding_says_the_filled_fields_rating_is_in_order_as_the_meaning_figure_draws_it():
    """R-1: pooled, a 1 is the least often wrong (the 1s are empty fields); the meaning figure draws
    the filled fields, where the rating is in order. README and FINDINGS say both."""
    table = ROOT / "results/figures/table_meaning_by_output_kind.csv"
    rows = {r["value"]: r for r in _rows(table) if r["dataset"] == Path(MAIN).name and r["scorer"] == "judge-field"
            and r["fields"] == "value"}  # fmt: skip
    said = ", ".join(
        f"a {int(float(v))} is {_format(float(rows[v]['error_rate']), 'pct1')} wrong "
        f"({_format(float(rows[v]['n']), 'int')} fields)"
        for v in ("1.0000", "5.0000", "10.0000")
    )
    sentence = f"Within the filled fields, as the meaning figure draws them, the rating is in order: {said}."
    assert sentence in _finding("On planted financial-entity errors, a 1.5B judge's rating is not a probability")
