"""Scorer identities: every name the package has written reads back into fields and rebuilds exactly."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from construct_eval.kinds import JudgeMode
from construct_eval.types import JudgeInput, ScorerId, output_hash

ROOT = Path(__file__).resolve().parents[1]


def _recorded_names() -> set[str]:
    names: set[str] = set()
    for path in ROOT.glob("results/**/metrics/*.csv"):
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                names |= {row[k] for k in ("scorer", "a", "b") if row.get(k)}
    return names


def test_every_recorded_scorer_name_round_trips():
    names = _recorded_names()
    assert len(names) >= 30, "the recorded runs' tables name dozens of scorers"
    for name in names:
        assert ScorerId.parse(name).name == name


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("judge-doc", {"family": "judge-doc"}),
        (
            "judge-doc[sec:o-s-r|fields:original]:expected",
            {"variant": "sec:o-s-r|fields:original", "value": "expected"},
        ),
        ("judge-field@leaf:expected:min", {"granularity": "leaf", "value": "expected", "aggregate": "min"}),
        ("consistency:min", {"family": "consistency", "aggregate": "min"}),
        ("token_logprob@top", {"family": "token_logprob", "granularity": "top"}),
        (
            "combo:rank-mean[judge-doc[sec:r-s-o|fields:original]:expected+reflection]@top",
            {"method": "rank-mean", "members": ("judge-doc[sec:r-s-o|fields:original]:expected", "reflection")},
        ),
        ("field-prior-uses-labels@leaf", {"family": "field-prior-uses-labels", "granularity": "leaf"}),
    ],
)
def test_a_name_reads_into_its_fields(name, fields):
    sid = ScorerId.parse(name)
    for key, value in fields.items():
        assert getattr(sid, key) == value
    assert sid.name == name


def test_questions_asked_of_an_identity_not_of_a_string():
    assert ScorerId.parse("judge-field:min").is_written_rating
    assert not ScorerId.parse("judge-doc:expected").is_written_rating
    assert ScorerId.parse("fitted-oof-uses-labels[a+b]@leaf").uses_labels
    assert ScorerId.parse("combo:rank-mean[a+b]").is_combination
    assert not ScorerId.parse("reflection").is_judge
    assert ScorerId.judge(JudgeMode.FIELD, granularity="leaf", value="expected").name == "judge-field@leaf:expected"
    assert ScorerId.judge("fields-joint").name == "judge-joint"


@pytest.mark.parametrize("bad", ["", "[x]judge", "judge-doc[unclosed", "judge-doc]", "judge-doc:sideways"])
def test_a_malformed_name_is_refused_saying_why(bad):
    with pytest.raises(ValueError, match="scorer name"):
        ScorerId.parse(bad)


def test_the_output_hash_of_resume_keys_did_not_move():
    # the formula of every recorded run's keys: sha256 of the sorted-key JSON (UTF-8), 16 hex digits
    assert output_hash({"b": [1, "é"], "a": None}) == "47acac9da933d9fb"
    item = JudgeInput("d1", "request", None, {"a": 1})
    assert item.output_hash == output_hash({"a": 1})


def test_display_names_are_short_and_derived_from_the_identity():
    assert ScorerId.parse("combo:rank-mean[consistency@leaf+token_logprob@leaf]@leaf").display == (
        "combo:rank-mean[2 scorers]@leaf"
    )
    assert ScorerId.parse("judge-doc[sec:r-s-o|fields:reversed]:expected").display == "judge-doc[reversed]:expected"
    assert ScorerId.parse("judge-doc[sec:o-s-r|fields:original]").display == "judge-doc[o-s-r]"
    assert (
        ScorerId.parse("judge-doc[sec:o-s-r|fields:reversed]:expected").display == "judge-doc[o-s-r|reversed]:expected"
    )
    assert ScorerId.parse("judge-doc[sec:r-s-o|fields:original]").display == "judge-doc[original]"
    assert ScorerId.parse("judge-doc[sec:r-s-o|fields:original|ask:free]").display == "judge-doc[ask:free]"
    assert ScorerId.parse("judge-doc[shuffled1]").display == "judge-doc[shuffled1]"
    assert ScorerId.parse("token_logprob@top").display == "token_logprob@top"
