"""Reading JSON Lines with orjson gives the objects the standard library gives (construct_eval.jsonl)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from construct_eval.jsonl import JsonlError, _loads, iter_numbered

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=8), VALUES, max_size=6))
def test_a_line_reads_as_the_standard_library_reads_it(row):
    raw = json.dumps(row).encode()
    got, want = _loads(raw), json.loads(raw)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)  # NaN != NaN: compare as text
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]


def test_long_integers_keep_every_digit_and_bad_lines_name_file_and_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"account": 123456789012345678901234567890, "x": NaN}\n\n{"bad": \n')
    rows = iter_numbered(path)
    lineno, row = next(rows)
    assert (lineno, row["account"]) == (1, 123456789012345678901234567890) and row["x"] != row["x"]
    try:
        next(rows)
    except JsonlError as exc:
        assert f"{path}:3: not valid JSON" in str(exc)
    else:
        raise AssertionError("a line that is not JSON was read")
