"""The figure captions as facts plus a template (construct_eval.paper.captions, paper/templates/).

Each captioned figure's facts function computes typed values; its template words them with one
``answer`` section and an ``also`` section per further sentence. Here: every template renders its
parts from facts computed on stored tables (a non-empty answer, each part a sentence), a misspelt
name stops the caption instead of writing an empty string, and the manifest stores the parts that
make the message, so nothing needs to cut a caption back into sentences.
"""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pytest

from construct_eval.paper import captions, comparison_messages, messages
from construct_eval.paper import figure_data as fd
from construct_eval.paper.figure_data import Estimate
from construct_eval.templating import SECTION

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"
NATURAL = "natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"
PLANTED = "financial_ner-sample600-controlled30"
TEMPLATES = sorted(p.name.removesuffix(".md.j2") for p in captions.TEMPLATES.glob("[!_]*.md.j2"))


def _estimate(dataset: str, scorer: str, value: float, low: float, high: float, n: int, wrong: int) -> Estimate:
    return Estimate(dataset, "document", scorer, value, low, high, n, wrong / n, False, False, wrong, n,
                    docs_wrong=wrong, docs_right=n - wrong)  # fmt: skip


def _order_row(variant: str, shift: tuple[float, float], auroc: tuple[float, float]) -> dict[str, str]:
    return {"run": f"runs/{PLANTED}", "variant_b": variant, "n": "200", "mean_shift": str(sum(shift) / 2),
            "shift_low": str(shift[0]), "shift_high": str(shift[1]), "share_changed": "0.09", "auroc_a": "0.496",
            "auroc_diff": str(sum(auroc) / 2), "auroc_diff_low": str(auroc[0]), "auroc_diff_high": str(auroc[1])}  # fmt: skip


def _review_rows(dataset: str) -> list[dict]:
    return [{"dataset": dataset, "scorer": scorer, "n": 200, "positives": 60, "budget": b, "recall": r * b / 100,
             "recall_low": r * b / 200, "recall_high": min(1.0, r * b / 80), "uses_labels": False}
            for b in (10, 20, 30) for scorer, r in (("judge-doc", 1.0), ("token_logprob", 2.0))]  # fmt: skip


def _captions() -> dict[str, captions.Caption]:
    """One caption per template, each from facts its message function computes."""
    drawn = [_estimate(NATURAL, "token_logprob", 0.767, 0.716, 0.815, 350, 123),
             _estimate(NATURAL, "p-correct", 0.520, 0.450, 0.593, 350, 123)]  # fmt: skip
    order = {"rating": [_order_row("sec:o-s-r|fields:original", (0.2, 0.6), (-0.02, 0.06))],
             "expected_rating": [_order_row("sec:o-s-r|fields:original", (-0.1, 0.1), (-0.05, 0.08))]}  # fmt: skip
    return {
        "detection": messages.detection(drawn, "wrong outputs"),
        "meaning": messages.meaning(
            [fd.MeaningPanel(t) for t in fd.value_tables(RUNS / PLANTED) if t.level == "document"]
        ),
        "order": messages.order(order),
        "paper_comparison": comparison_messages.paper_comparison(fd.read_paper_comparison(RUNS / NATURAL)),
        "review": messages.review(_review_rows(NATURAL), "outputs"),
    }


def test_every_template_is_a_caption_with_its_answer_first():
    assert sorted(_captions()) == TEMPLATES  # each template has a figure that words with it, and each figure one
    for name in TEMPLATES:
        keys = SECTION.findall((captions.TEMPLATES / f"{name}.md.j2").read_text())
        assert "answer" in keys and set(keys) <= {"headline", "answer", "also"}, (name, keys)


@pytest.mark.parametrize("name", TEMPLATES)
def test_each_template_renders_its_parts(name):
    caption = _captions()[name]
    assert isinstance(caption, captions.Caption) and caption.answer, name
    assert str(caption) == " ".join([caption.answer, *caption.also])  # the parts make the message
    assert caption.answer.startswith(caption.headline) and caption.headline
    for sentence in [caption.answer, *caption.also]:
        assert sentence[:1].isupper() and sentence.endswith("."), (name, sentence)
        assert "  " not in sentence and " ." not in sentence and " ;" not in sentence, (name, sentence)


def test_a_misspelt_or_missing_fact_stops_the_caption():
    facts = messages.order_facts({"rating": [_order_row("sec:o-s-r|fields:original", (0.2, 0.6), (0.01, 0.09))]})
    assert "; it changes the AUROC for output first (the forced rating, +0.050)." in captions.render("order", facts)
    with pytest.raises(jinja2.UndefinedError, match="where"):
        captions.render("order", {k: v for k, v in facts.items() if k != "where"})
    misspelt = captions._environment().from_string("== answer\n{{ moves[0].ordr }} moves.\n")
    with pytest.raises(jinja2.UndefinedError, match="ordr"):
        misspelt.render(**facts)


def test_a_caption_has_one_answer_and_a_headline_it_opens_with():
    assert captions.Caption("A; b.", ["C."], "A").parts() == {"headline": "A", "answer": "A; b.", "also": ["C."]}
    assert captions.Caption("A.").headline == "A" and captions.Caption("") == ""
    assert captions.caption_of("== headline\nA\n== answer\nA; b.\n== also\n\n== also\nC.\n") == "A; b. C."
    with pytest.raises(ValueError, match="one 'answer' section"):
        captions.caption_of("== also\nB.\n")
    with pytest.raises(ValueError, match="begin with its headline"):
        captions.caption_of("== headline\nX\n== answer\nA.\n")


@pytest.mark.parametrize("folder", ["results/figures", "results/figures/one_column"])
def test_the_manifest_stores_each_captions_parts_beside_its_message(folder):
    path = ROOT / folder / "manifest.json"
    if not path.exists():
        pytest.skip(f"no committed figure set in {folder}")
    entries = [e for e in json.loads(path.read_text())["files"].values() if e.get("message")]
    assert entries
    for e in entries:
        assert e["answer"] and " ".join([e["answer"], *e["also"]]) == e["message"]
        assert e["answer"].startswith(e["headline"])
