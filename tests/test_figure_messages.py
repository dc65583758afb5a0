"""A main figure's message: its caption sentence, what else it shows, and the comparisons it rests on.

The recorded natural-error run (committed under ``results/runs``) is where a judge rated part of
the outputs and the generator's log-probs all of them: its stored paired table, written by
``construct-eval paired`` with other code, checks the figure's own comparison on the items both
rated.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("tueplots", reason="tueplots is the figures extra (make venv installs it)")

from construct_eval.display.style import wrap
from construct_eval.paper import messages
from construct_eval.paper.figure_data import Estimate, paired_on_common, paper_flat_note

ROOT = Path(__file__).resolve().parents[1]
NATURAL = ROOT / "results/runs/natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"
SHIPPING = NATURAL.name


def _estimate(scorer: str, value: float, low: float, high: float, n: int, wrong: int) -> Estimate:
    return Estimate(SHIPPING, "document", scorer, value, low, high, n, wrong / n, False, False, wrong, n,
                    docs_wrong=wrong, docs_right=n - wrong)  # fmt: skip


def _pair(low: float, high: float) -> dict[str, float | int | str]:
    return {"dataset": SHIPPING, "n": 246, "positives": 123, "auroc_a": 0.787, "auroc_b": 0.520,
            "difference": 0.268, "low": low, "high": high}  # fmt: skip


def test_two_scores_on_different_items_are_compared_by_their_paired_difference_on_the_items_both_rated():
    drawn = [
        _estimate("token_logprob", 0.767, 0.716, 0.815, 350, 123),
        _estimate("p-correct", 0.520, 0.450, 0.593, 246, 123),
    ]
    assert [(o.scorer, j.scorer) for o, j in messages.unpaired(drawn)] == [("token_logprob", "p-correct")]
    key = (SHIPPING, "token_logprob", "p-correct")
    above = messages.detection(drawn, "wrong outputs", paired={key: _pair(0.180, 0.351)})
    first = messages.sentences(above)[0]
    assert (
        "token log-probs find wrong outputs better than the judge's best score, on the 246 outputs both rated" in first
    )
    assert "paired difference +0.268 [+0.180, +0.351]" in first
    # intervals apart on their own items, but the paired difference holds 0: no "better"
    held = messages.detection(drawn, "wrong outputs", paired={key: _pair(-0.020, 0.351)})
    assert "no label-free score other than the judge's finds wrong outputs better" in held
    # without the paired comparison, the intervals decide (and the figure says which items each rated)
    assert "their 95% intervals apart" in messages.detection(drawn, "wrong outputs")


def test_the_paired_comparison_on_common_items_equals_the_runs_stored_paired_table():
    if not (NATURAL / "metrics/paired_document_judge-doc.csv").exists():
        pytest.skip(f"{NATURAL} is not evaluated here")
    with (NATURAL / "metrics/paired_document_judge-doc.csv").open() as f:
        stored = next(r for r in csv.DictReader(f) if r["a"] == "token_logprob")
    mine = paired_on_common(NATURAL, "document", "token_logprob", "judge-doc")
    assert mine is not None and mine["n"] == int(stored["n"]) and mine["positives"] == int(stored["positives"])
    for key in ("auroc_a", "auroc_b", "difference", "low", "high"):
        assert mine[key] == pytest.approx(float(stored[key]), abs=1e-9), key
    assert paired_on_common(NATURAL, "document", "token_logprob", "no-such-score") is None


def test_a_caption_is_the_first_sentence_and_the_figure_index_lists_the_others():
    text = "On 2 of 3 (as in Fig. 2. A) it does; so. The checks rank below chance. Grey: a reference."
    assert messages.sentences(text) == ["On 2 of 3 (as in Fig. 2. A) it does; so.", "The checks rank below chance.",
                                        "Grey: a reference."]  # fmt: skip
    index = (ROOT / "results/figures/figures.md").read_text()
    manifest = json.loads((ROOT / "results/figures/manifest.json").read_text())["files"]
    for name in ("detect_field_filled.png", "meaning_ratings.png"):
        first, *rest = messages.sentences(manifest[name]["message"])
        assert f"*{first}*" in index
        block = index[index.index(f"*{first}*") :].split("### ")[0]
        assert rest and all(f"- {s}" in block for s in rest), name
        assert "Also in the figure:" in block and f"({Path(name).stem}:" not in block  # no file name in a caption


@pytest.mark.parametrize(
    "row,note",
    [
        ({"one_value": "10", "rating_use": "flat (10:100%)"}, "constant"),
        ({"one_value": "", "rating_use": "flat (5:10% 10:90%)"}, "2 values"),
        ({"one_value": "", "rating_use": "varying (3:20% 5:30% 9:50%)"}, ""),
        ({"one_value": ""}, ""),  # a score that is no rating
    ],
)
def test_a_paper_comparison_row_says_how_flat_its_rating_is_on_the_common_items(row, note):
    assert paper_flat_note(row) == note


def test_a_wrapped_label_keeps_a_hyphenated_word_whole():
    assert wrap("fields reversed: request, schema, output, fields last-to-first", 50).split("\n") == [
        "fields reversed: request, schema, output, fields",
        "last-to-first",
    ]


def test_a_share_short_of_all_is_never_written_100_percent():
    assert messages._pct([0.769, 0.996]) == "77% to >99%"
    assert messages._pct([0.769, 1.0]) == "77-100%"
