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
from construct_eval.paper import captions, comparison_messages, message_parts, messages
from construct_eval.paper.figure_data import Estimate, paper_flat_note
from construct_eval.reports.figure_pairs import paired_on_common

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
    first, rest = above.answer, list(above.also)
    assert (
        "token log-probs find wrong outputs better than the judge's best score, by a paired difference of +0.268 "
        "[+0.180, +0.351] on the 246 outputs both rated;" in first
    )
    assert first.endswith("the judge's best reaches AUROC 0.520 (its 95% interval holds chance).")
    assert len(first.split()) <= 55  # the answer; the items and AUROCs after it
    # the judged part's share wrong beside the run's (the judge was asked on a chosen part), and each AUROC
    assert rest[0] == ("On synthetic shipping notices, the 246 outputs both rated (chosen half wrong by label, 123 wrong: "
                       "50%, against 35% of all 350): AUROC 0.787 (0.767 as drawn, on all 350) against 0.520, paired difference +0.268 "
                       "[+0.180, +0.351].")  # fmt: skip
    # intervals apart on their own items, but the paired difference holds 0: no "better"
    held = messages.detection(drawn, "wrong outputs", paired={key: _pair(-0.020, 0.351)})
    assert "no label-free score other than the judge's finds wrong outputs better" in held
    # without the paired comparison, the intervals decide (and the figure says which items each rated)
    assert "their 95% intervals apart" in messages.detection(drawn, "wrong outputs")


def test_where_one_dataset_is_won_by_intervals_and_another_by_a_paired_difference_the_answer_names_each():
    """Two datasets, two bases: the intervals apart on one, a paired difference on the items both
    rated on the other (the two scores rated different items there); the answer says which is which."""
    financial = "financial_ner-sample200"
    drawn = [
        _estimate("token_logprob", 0.767, 0.716, 0.815, 350, 123),
        _estimate("p-correct", 0.520, 0.450, 0.593, 246, 123),
        Estimate(financial, "document", "token_logprob", 0.850, 0.800, 0.900, 200, 0.5, False, False, 100, 200,
                 docs_wrong=100, docs_right=100),
        Estimate(financial, "document", "p-correct", 0.600, 0.550, 0.650, 200, 0.5, False, False, 100, 200,
                 docs_wrong=100, docs_right=100),
    ]  # fmt: skip
    key = (SHIPPING, "token_logprob", "p-correct")
    answer = messages.detection(drawn, "wrong outputs", paired={key: _pair(0.180, 0.351)}).answer
    assert (
        "better than the judge's best score, on financial NER with their 95% intervals apart and on synthetic" in answer
    )
    assert (
        "shipping notices by a paired difference on the outputs both rated (one of the two was asked on only part of the outputs there)"
        in answer
    )
    assert "or, on different items" not in answer


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


def test_a_caption_is_its_answer_and_the_figure_index_lists_the_other_sentences():
    index = (ROOT / "results/figures/figures.md").read_text()
    manifest = json.loads((ROOT / "results/figures/manifest.json").read_text())["files"]
    for name in ("detect_field_filled.png", "meaning_ratings.png"):
        first, rest = manifest[name]["answer"], manifest[name]["also"]
        assert " ".join([first, *rest]) == manifest[name]["message"]  # the parts stored are the message
        assert f"*{first}*" in index
        block = index[index.index(f"*{first}*") :].split("### ")[0]
        assert rest and all(f"- {s}" in block for s in rest), name
        assert "Also in the figure:" in block and f"({Path(name).stem}:" not in block  # no file name in a caption


@pytest.mark.parametrize(
    "row,note",
    [
        ({"one_value": "10", "rating_use": "flat (10:100%)"}, "constant"),
        ({"one_value": "", "rating_use": "flat (5:10% 10:90%)"}, "2 values"),
        ({"one_value": "", "rating_use": "flat (5:9% 10:90%)"}, "mostly 2 values"),  # 1% hold another value
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


def test_the_construct_caption_answers_first_with_the_ranking_its_table_allows():
    if not (NATURAL / "metrics/paper_comparison.csv").exists():
        pytest.skip(f"{NATURAL} is not evaluated here")
    from construct_eval.paper.figure_data import read_paper_comparison

    rows = read_paper_comparison(NATURAL)
    caption = comparison_messages.paper_comparison(rows)
    first, rest = caption.answer, list(caption.also)
    for r in rows:  # every ranking of the paper's claim after Holm is the answer, in the first sentence
        if r.get("auroc_holm_family") == "primary" and str(r.get("auroc_ranking")).endswith(("higher", "lower")):
            unit = "output" if r["level"] == "document" else "field"
            word = "below" if r["auroc_ranking"].endswith("lower") else "above"
            assert f"per {unit}, {'no' if word == 'below' else 'yes'}: CONSTRUCT" in first[:1].lower() + first[1:]
            assert f"CONSTRUCT minus it {float(r['auroc_diff']):+.3f}" in first
    assert "same rating" not in first and "gave every item" not in first  # the constant judge is a note, not the answer
    if any(r.get("one_value") for r in rows if r["key"].startswith("judge")):
        assert any("at chance by construction" in s for s in rest)
    primary = [
        r for r in rows if r.get("auroc_holm_family") == "primary" and r.get("auroc_p_holm") == r.get("auroc_p_holm")
    ]
    assert first.startswith(("Per output, ", "Per field, "))  # the answer first; the setting after it
    assert rest[0].startswith(("Interim: CONSTRUCT asked on ", "On ")) and "on the items all of them scored" in rest[0]
    family = next(s for s in rest if s.startswith("Holm's family"))  # "over 5 tests" names its tests
    assert f"{primary[0]['holm_tests']} tests fixed in advance" in family
    assert f"Holm over {primary[0]['holm_tests']} tests" in first


def test_a_review_caption_leads_with_what_the_judge_finds():
    manifest = json.loads((ROOT / "results/figures/manifest.json").read_text())["files"]
    if "review_document.png" not in manifest:
        pytest.skip("the committed figure set has no review figure")
    first = manifest["review_document.png"]["answer"]
    assert first.startswith("Reviewing the 20% of outputs a score trusts least, the judge's best score there (ringed) ")
    assert len(first.split()) <= 45, first


def test_a_figure_set_names_the_models_its_runs_used():
    from construct_eval.paper import figure_set

    runs = [ROOT / "results/runs" / n for n in (SHIPPING, "financial_ner-sample200")]
    if not all((r / "run.json").exists() for r in runs):
        pytest.skip("the recorded runs are not here")
    said = figure_set._models_words(runs)
    assert "the LLM judge is Qwen2.5-Coder-1.5B on every dataset of the main figures" in said
    assert "the generator is Qwen2.5-Coder-1.5B on synthetic shipping notices" in said
    assert "Qwen2.5-Coder-0.5B on financial NER (generator's errors)" in said


def test_a_main_figure_that_cannot_hold_every_panel_leaves_out_planted_errors_before_a_generators():
    from construct_eval.paper import figures

    panels = [
        "financial_ner-sample600-controlled30",
        "financial_ner-sample200-nearmiss30",
        "financial_ner-sample200",
        SHIPPING,
    ]
    kept = figures._fits(lambda ps: len(ps) * 3.0, panels, "icml", "half")  # a page holds two of these
    assert kept == ["financial_ner-sample200", SHIPPING]  # the generators' errors, in their order


def test_a_review_caption_on_common_items_gives_their_share_wrong_beside_the_runs():
    manifest = json.loads((ROOT / "results/figures/manifest.json").read_text())["files"]
    table = ROOT / "results/figures/table_review_document_common_items.csv"
    if "review_document.png" not in manifest or not table.exists():
        pytest.skip("the committed figure set has no review figure on common items")
    with table.open() as f:
        row = next(r for r in csv.DictReader(f) if r["scorer"] == "token_logprob" and r["budget"] == "20")
    message = manifest["review_document.png"]["message"]
    share = 100 * int(row["positives"]) / int(row["n"])
    whole = 100 * int(row["all_positives"]) / int(row["all_n"])
    assert (
        f"drawn on the {int(row['n']):,} of {int(row['all_n']):,} outputs every score rated (chosen half wrong by label, "
        f"{int(row['positives']):,} wrong: {share:.0f}%, against {whole:.0f}% of all {int(row['all_n']):,}" in message
    )
    assert f"{100 * float(row['all_recall']):.0f}% [" in message  # the recall on all its items beside


def _share_of(wrong: int, n: int, all_wrong: int, all_n: int) -> str:
    """A part's share wrong beside the whole's, as the captions' ``share_of`` macro words its facts."""
    template = '{% from "_macros.md.j2" import share_of %}{{ share_of(s) }}'
    return captions._environment().from_string(template).render(s=message_parts.share_facts(wrong, n, all_wrong, all_n))


def test_a_part_is_said_chosen_by_label_only_where_it_is_half_wrong_and_the_whole_is_not():
    assert _share_of(123, 246, 123, 350) == "chosen half wrong by label, 123 wrong: 50%, against 35% of all 350"
    assert _share_of(60, 200, 123, 350) == "60 wrong: 30%, against 35% of all 350"
    assert not _share_of(100, 200, 180, 350).startswith("chosen")  # the whole is about half wrong too


def test_notebook_07_answers_with_the_caption_said_once():
    from construct_eval.studies.natural_notebook import answer_markdown

    message = (
        "Per output, no: CONSTRUCT (AUROC 0.49 [0.37, 0.61]) ranks below token log-probs. Holm's family is 5 tests."
    )
    message = (
        "Per output, no: CONSTRUCT (AUROC 0.49 [0.37, 0.61]) ranks below token log-probs; per field, no: CONSTRUCT "
        "(AUROC 0.55) ranks below it. Interim: 150 of 200. Holm's family is 5 tests. The judge is constant."
    )
    said = [
        "Per output, no: CONSTRUCT (AUROC 0.49 [0.37, 0.61]) ranks below token log-probs; per field, no: CONSTRUCT "
        "(AUROC 0.55) ranks below it.",
        "Interim: 150 of 200.",
        "Holm's family is 5 tests.",
        "The judge is constant.",
    ]
    assert " ".join(said) == message
    text = answer_markdown("does CONSTRUCT find wrong outputs", said[0], said[1:])
    # the answer per level in bold, then the caption's first two sentences; the rest folded, a bullet each
    assert text.startswith("**Does CONSTRUCT find wrong outputs?** **Per output, no; per field, no.** Per output, no: "
                           "CONSTRUCT (AUROC 0.49")  # fmt: skip
    for sentence in said:
        assert text.count(sentence) == 1, sentence
    assert "Interim: 150 of 200.\n\n<details><summary>What else the figure shows (2 notes)</summary>" in text
    assert text.endswith("- Holm's family is 5 tests.\n- The judge is constant.\n\n</details>")


def test_the_order_figure_footer_names_a_prompt_section_as_the_score_labels_do():
    """The footer defining an order and the row label naming it use one word for the section that
    holds the document (a reader saw 'request' in the footer and 'document' in the labels)."""
    from construct_eval.display.style import order_label
    from construct_eval.paper.order_plot import order_words

    assert order_words("sec:o-s-r|fields:original") == "output, schema, document, fields as extracted"
    assert order_label("sec:o-s-r|fields:original") == "output first"
    assert order_words("sec:r-s-o|fields:reversed") == "document, schema, output, last field first"
    assert "request" not in order_words("sec:s-o-r|fields:shuffled3")


def test_the_order_message_says_when_the_default_orders_rating_hardly_varies():
    """A forced rating that is one value on 96% of the outputs ranks at about 0.5 because it hardly
    varies; the order figure's message says so beside its default-order AUROC, from the stored
    detection row (a reader took 'the forced rating 0.496' for a scale ranking at chance)."""
    from construct_eval.paper import figure_data as fd
    from construct_eval.paper.figures import build_figures

    run = ROOT / "results/runs/financial_ner-sample600-controlled30"
    (figure,) = build_figures([run], only="order_shift")
    pairs = list(csv.DictReader((run / "metrics/bias_pairs_doc.csv").open()))
    default, auroc = pairs[0]["variant_a"], float(pairs[0]["auroc_a"])
    forced = [e for e in fd.read_detection(run) if e.level == "document" and fd.role(e.scorer) == "judge"
              and e.sid is not None and not e.sid.aggregate and e.sid.variant == default]  # fmt: skip
    assert forced and forced[0].flat, "the recorded run's default forced rating is flat"
    # the note is of the run's whole detection row, so it says its n (the AUROC is on the outputs paired)
    said = f"the forced rating at AUROC {auroc:.3f} ({forced[0].flat_note} over the run's {forced[0].n:,} outputs)"
    assert said in figure.message
    assert "one value" in forced[0].flat_note
    # without the note, the AUROC stands alone, as before
    assert f"the forced rating at AUROC {auroc:.3f};" not in figure.message


def _order_row(variant: str, shift: tuple[float, float], auroc: tuple[float, float], share: str = "0.09") -> dict:
    return {"run": "runs/financial_ner-sample600-controlled30", "variant_b": variant, "n": "200",
            "mean_shift": str(sum(shift) / 2), "shift_low": str(shift[0]), "shift_high": str(shift[1]),
            "share_changed": share, "auroc_a": "0.496", "auroc_diff": str(sum(auroc) / 2),
            "auroc_diff_low": str(auroc[0]), "auroc_diff_high": str(auroc[1])}  # fmt: skip


@pytest.mark.parametrize("expected_first", [False, True])
def test_the_order_message_when_only_the_forced_rating_moves(expected_first):
    """Only the forced rating's shift excludes 0, and no AUROC changes: the message says the shift
    and its share of changed ratings, and that no AUROC change was detected, whichever rating's rows
    come first (the share once leaked into the list of AUROC changes when the forced rating's came last)."""
    rating = [_order_row("sec:o-s-r|fields:original", (0.2, 0.6), (-0.02, 0.06))]
    expected = [_order_row("sec:o-s-r|fields:original", (-0.1, 0.1), (-0.05, 0.08))]
    by_value = (
        {"expected_rating": expected, "rating": rating}
        if expected_first
        else {"rating": rating, "expected_rating": expected}
    )
    message = messages.order(by_value)
    assert (
        "output first moves the forced rating by +0.400 [+0.200, +0.600] points (9.0% of its ratings changed)"
        in message
    )
    assert "no change in how well either rating ranks wrong outputs was detected" in message
    assert "it changes the AUROC" not in message


def test_the_order_message_when_a_moved_rating_also_changes_its_auroc():
    rating = [_order_row("sec:o-s-r|fields:original", (0.2, 0.6), (0.01, 0.09))]
    expected = [_order_row("sec:o-s-r|fields:original", (-0.1, 0.1), (-0.05, 0.08))]
    message = messages.order({"rating": rating, "expected_rating": expected})
    assert message.endswith("; it changes the AUROC for output first (the forced rating, +0.050).")
    assert "(9.0% of its ratings changed)" in message
