"""One grammar, one canonical name: properties over generated identities and over every stored name.

``parse(x.name)`` gives ``x`` back, field for field, for any identity the grammar allows; every
name the recorded tables and run files hold is its own canonical spelling; a name with its
parts in another order is refused, never read as a second spelling of the same scorer.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from construct_eval.kinds import JudgeMode, Level
from construct_eval.scorer_registry import ScorerSpec, checked, specs
from construct_eval.types import AGGREGATES, VALUES, ScorerId, _top_level

ROOT = Path(__file__).resolve().parents[1]
FIELDS = [f.name for f in dataclasses.fields(ScorerId)]

registered = [s.family for s in specs()]
judges = [s.family for s in specs() if s.judge_mode is not None]
combining = [s.family for s in specs() if s.combines]
plain = [s.family for s in specs() if s.judge_mode is None and not s.combines]
new_family = st.from_regex(r"[a-z][a-z0-9_.]{0,6}(-[a-z0-9]{1,4})?", fullmatch=True).filter(
    lambda f: f not in registered and not f.startswith("judge")
)
word = st.from_regex(r"[a-z][a-z0-9_-]{0,6}", fullmatch=True)
variant = st.lists(st.from_regex(r"[a-z]{1,5}:[a-z0-9-]{1,8}", fullmatch=True), min_size=1, max_size=3).map("|".join)
optional = st.none().__or__


@st.composite
def simple_ids(draw) -> ScorerId:
    family = draw(st.sampled_from(judges + plain) | new_family)
    is_judge = family in judges
    return ScorerId(
        family,
        variant=draw(optional(variant)) if is_judge else None,
        granularity=draw(optional(word)),
        value=draw(optional(st.sampled_from(VALUES))),
        aggregate=draw(optional(st.sampled_from(AGGREGATES))),
    )


@st.composite
def identities(draw) -> ScorerId:
    if draw(st.booleans()):
        return draw(simple_ids())
    return ScorerId(
        draw(st.sampled_from(combining)),
        method=draw(optional(word)),
        members=tuple(draw(st.lists(simple_ids(), min_size=1, max_size=4))),
        granularity=draw(optional(word)),
    )


def _fields(sid: ScorerId) -> dict:
    return {k: getattr(sid, k) for k in FIELDS} | {"members": tuple(_fields(m) for m in sid.members)}


@settings(max_examples=300, deadline=None)
@given(identities())
def test_a_generated_identity_reads_back_from_its_name_field_for_field(sid):
    again = ScorerId.parse(sid.name)
    assert _fields(again) == _fields(sid)
    assert again == sid and hash(again) == hash(sid) and again.name == sid.name


@settings(max_examples=300, deadline=None)
@given(identities(), st.randoms())
def test_a_name_with_its_parts_in_another_order_is_refused(sid, rnd):
    parts = _top_level(sid.name)
    head, rest = parts[0], parts[1:]
    orders = [p for p in itertools.permutations(rest) if list(p) != rest]
    if not orders:
        return
    shuffled = head + "".join(rnd.choice(orders))
    with pytest.raises(ValueError, match="scorer name"):
        ScorerId.parse(shuffled)


def _stored_names() -> set[str]:
    names: set[str] = set()
    for path in ROOT.glob("results/**/metrics/*.csv"):
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                names |= {row[k] for k in ("scorer", "a", "b", "runner_up") if row.get(k)}
    return names


def test_every_name_in_every_stored_table_is_canonical():
    names = _stored_names()
    assert len(names) >= 40, "the recorded runs' tables name dozens of scorers"
    for name in sorted(names):
        sid = ScorerId.parse(name)
        assert sid.name == name and ScorerId.parse(sid.name) == sid
        assert checked(name) == sid  # and it fits its family's declaration
        assert _fields(ScorerId.parse(sid.name)) == _fields(sid)


def test_every_scorer_of_every_stored_run_file_is_canonical_with_its_granularity():
    seen: set[tuple[str, str | None]] = set()
    for path in ROOT.glob("results/**/scores.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            gran = None if row["field"] == "__doc__" else row.get("granularity", "leaf")
            seen.add((row["scorer"], gran))
    assert seen
    for name, gran in seen:
        sid = ScorerId.parse(name)
        assert sid.name == name and sid.granularity is None  # rows carry a bare name; the granularity beside it
        items = sid.replace(granularity=gran)
        assert items.level is (Level.DOCUMENT if gran is None else Level.FIELD)
        assert ScorerId.parse(items.name) == items


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("consistency:min@leaf", "consistency@leaf:min"),
        ("judge-field:min:expected", "judge-field:expected:min"),
        ("judge-field@leaf[sec:o-s-r|fields:original]", "judge-field[sec:o-s-r|fields:original]@leaf"),
        ("combo:rank-mean[token_logprob+consistency:min]", "combo:rank-mean[consistency:min+token_logprob]"),
    ],
)
def test_the_other_order_is_refused_and_the_canonical_one_reads(name, canonical):
    with pytest.raises(ValueError, match="scorer name"):
        ScorerId.parse(name)
    assert ScorerId.parse(canonical).name == canonical


def test_an_identity_equals_its_canonical_name_and_sorts_by_it():
    a, b = ScorerId.parse("consistency@leaf"), ScorerId.parse("token_logprob@leaf")
    assert a == "consistency@leaf" and "consistency@leaf" == a and a != "consistency@top"  # noqa: SIM300
    assert {a: 1}["consistency@leaf"] == 1
    assert sorted([b, a]) == [a, b]
    assert a.level is Level.FIELD and ScorerId.parse("consistency:min").level is Level.DOCUMENT
    assert ScorerId.parse("judge-field").item_granularity == "top"


def test_an_identity_reads_its_name_without_asking_the_registry():
    """A value type: what a name says (judge, uses labels, combination) is in the name itself."""
    import subprocess
    import sys

    code = (
        "import sys; from construct_eval.types import ScorerId; "
        "assert 'construct_eval.scorer_registry' not in sys.modules, 'types imported the registry'; "
        "s = ScorerId.parse('combo:rank-mean[consistency@leaf+judge-field@leaf:expected]@leaf'); "
        "assert s.is_combination and not s.is_judge and s.members[1].is_judge; "
        "assert ScorerId.parse('judge-doc[sec:o-s-r|fields:original]').variant == 'sec:o-s-r|fields:original'; "
        "assert ScorerId('field-prior-uses-labels').uses_labels and not ScorerId('tlm').uses_labels"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        (dict(family="x-prior", uses_labels=True), "says so in its name"),
        (dict(family="x-prior-uses-labels"), "says so in its name"),
        (dict(family="judge-doc2", judge_mode=JudgeMode.DOC), "a judge rating's family is its mode's"),
    ],
)
def test_a_declaration_whose_name_says_otherwise_is_refused(spec, why):
    with pytest.raises(ValueError, match=why):
        ScorerSpec(label="x", colour="#000000", **spec)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("consistency[token_logprob]", "combines no scorers"),
        ("combo", "lists the scorers it combines"),
        ("judge-doc:rank-mean[sec:o-s-r]", "unknown part"),
    ],
)
def test_a_name_where_it_enters_must_fit_its_family(name, why):
    with pytest.raises(ValueError, match=why):
        checked(name)


def test_the_cli_reads_a_scorer_name_once_and_refuses_a_bad_one_saying_why(tmp_path, capsys):
    from construct_eval.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["paired", "--run", str(tmp_path), "--reference", "combo"])
    assert stop.value.code == 2
    assert "lists the scorers it combines" in capsys.readouterr().err
