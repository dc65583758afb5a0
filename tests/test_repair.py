"""``construct-eval repair``: unreadable run-file lines move to a side file (never deleted), and the
run then resumes making only the calls whose rows were lost."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from construct_eval.cli import main
from construct_eval.data.repair import SIDE_SUFFIX, restore_line
from construct_eval.runlock import EXIT_LOCKED
from construct_eval.serving.scripted_server import ScriptedServer
from tests.conftest import make_run
from tests.test_runlock import holder_of  # noqa: F401 - the fixture

DOCS = 5
CALLS = DOCS * 5


def _damage(path, how: str) -> tuple[int, bytes]:
    """Damage the run file as a disk or a crash would; (rows lost, the bytes that replaced them)."""
    lines = path.read_bytes().splitlines(keepends=True)
    if how == "garbage":  # a middle line overwritten
        lines[7] = b"#\x07 this block was overwritten \xff\xfe\n"
        bad, lost = lines[7], 1
    elif how == "nul":  # a middle line zeroed, as a lost disk block reads back
        lines[12] = b"\x00" * (len(lines[12]) - 1) + b"\n"
        bad, lost = lines[12], 1
    else:  # cut mid-line: the rest of the file is gone
        lines = [*lines[:18], lines[18][: len(lines[18]) // 2]]
        bad, lost = lines[18], CALLS - 18
    path.write_bytes(b"".join(lines))
    return lost, bad


@pytest.mark.parametrize("how", ["garbage", "nul", "cut"])
def test_unreadable_lines_move_aside_with_their_place_and_the_run_resumes_only_the_lost_calls(tmp_path, capsys, how):
    run = make_run(tmp_path / "run", DOCS)
    with ScriptedServer() as server:
        score = ["score", "--run", str(run.path), "--mode", "doc,fields", "--base-url", server.base_url]
        score += ["--model", "m", "--quiet", "--no-cache"]
        assert main(score) == 0 and len(server.requests) == CALLS
        reference = sorted(r["key"] for r in run.read("judgments"))
        path = run.file("judgments")
        lost, bad = _damage(path, how)
        line_no = {"garbage": 8, "nul": 13, "cut": 19}[how]
        offset = path.read_bytes().index(bad)
        if how != "cut":  # a middle line stops every reader, naming the way out
            capsys.readouterr()
            assert main(score) == 2 and len(server.requests) == CALLS
            assert f"judgments.jsonl:{line_no}: not" in (err := capsys.readouterr().err)
            assert "construct-eval repair --run" in err

        assert main(["repair", "--run", str(run.path), "--dry-run"]) == 0
        assert (
            "would move 1 unreadable lines" in capsys.readouterr().out
            and not path.with_name(path.name + SIDE_SUFFIX).exists()
        )
        assert main(["repair", "--run", str(run.path)]) == 0
        out = capsys.readouterr().out
        assert "moved 1 unreadable lines" in out and f"line {line_no} (byte {offset}," in out
        assert "made again by: score" in out
        (side,) = [json.loads(x) for x in path.with_name(path.name + SIDE_SUFFIX).read_text().splitlines()]
        assert (side["line"], side["offset"], side["length"]) == (line_no, offset, len(bad))
        assert restore_line(side) == bad, "the moved line is kept byte for byte"
        assert main(["repair", "--run", str(run.path)]) == 0
        assert "nothing moved" in capsys.readouterr().out  # nothing left to move

        assert main(score) == 0
        assert len(server.requests) == CALLS + lost, "only the calls whose rows were lost"
    keys = [r["key"] for r in run.read("judgments")]
    assert sorted(keys) == reference and not [k for k, n in Counter(keys).items() if n > 1]


def test_repair_goes_through_every_run_file_and_leaves_readable_lines_byte_for_byte(tmp_path, capsys):
    run = make_run(tmp_path / "run", 4)
    outputs = run.file("outputs").read_bytes().splitlines(keepends=True)
    records_before = run.file("records").read_bytes()
    run.file("outputs").write_bytes(b"".join([outputs[0], b"[1, 2]\n", *outputs[1:], b"\n"]))
    assert main(["repair", "--run", str(run.path)]) == 0
    out = capsys.readouterr().out
    assert "outputs.jsonl: 1 of 6 lines moved" in out and "not a JSON object" in out
    assert run.file("outputs").read_bytes() == b"".join([*outputs, b"\n"])  # blank lines are readable
    assert run.file("records").read_bytes() == records_before
    assert len(run.read("outputs")) == 4


def test_repair_is_refused_while_another_process_writes_the_run(tmp_path, holder_of):  # noqa: F811
    run = make_run(tmp_path / "run", 2)
    holder_of(run.path)
    assert main(["repair", "--run", str(run.path)]) == EXIT_LOCKED
