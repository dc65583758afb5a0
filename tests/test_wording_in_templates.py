"""The wording of findings, captions, figures.md and the notebooks lives in Jinja2 templates.

The Python modules that turn stored cells into those texts read cells, build tables and pass
facts; a sentence written in them would be a wording change that is a Python change again. This
test reads each module's syntax tree and fails on a string literal (or an f-string's text) of
:data:`LONGEST` words or more that is not a docstring, an error raised, a Markdown table's row or an
HTML marker. The counts file's ``what`` column (``studies/findings/counts.py``) defines a stored
table and is not among them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "construct_eval"
WORDING = [
    "studies/natural_notebook.py",
    "studies/error_detection_notebook.py",
    "studies/decision_notebook.py",
    "studies/calibration_notebook.py",
    "studies/positional_notebook.py",
    "studies/judge_study_report.py",
    "studies/decision_findings.py",
    "studies/notebook_words.py",
    "studies/findings/__init__.py",
    "studies/findings/facts.py",
    "studies/findings/wording.py",
    "paper/messages.py",
    "paper/comparison_messages.py",
    "paper/message_parts.py",
    "paper/captions.py",
    "paper/figure_set.py",
]
LONGEST = 13
"""A literal this many words long reads as a sentence (the longest label or heading left is 12)."""


def sentences_in(source: str) -> list[tuple[int, str]]:
    """(line, text) of each literal in ``source`` that reads as a sentence (see the module)."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant | ast.JoinedStr):  # a docstring
            skip.update(id(n) for n in ast.walk(node))
        if isinstance(node, ast.Raise):
            skip.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
            text = "".join(v.value if isinstance(v, ast.Constant) else " " for v in node.values)  # a value is no word
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        words = [w for w in text.split() if any(c.isalpha() for c in w)]
        if len(words) >= LONGEST and not text.lstrip().startswith(("|", "<!--")):
            found.append((node.lineno, text))
    return found


@pytest.mark.parametrize("module", WORDING)
def test_no_sentence_is_written_in_the_python_that_words_findings_captions_and_notebooks(module):
    found = sentences_in((PACKAGE / module).read_text())
    assert not found, f"{module}: word these in its template: " + "; ".join(f"line {n}: {t[:70]!r}" for n, t in found)


def test_the_check_finds_a_sentence_in_a_literal_and_in_an_f_string_but_not_a_table_row():
    source = '''
"""A docstring of many words that the check must leave alone, however long it runs on."""
a = "On 3 of the 4 datasets the judge's best score finds errors better than chance."
b = f"On {k} of the {m} datasets the judge's best score finds errors better than chance."
c = "| score | n | AUROC | minus the forced rating | Holm p | what the interval allows | note |"
d = "a short label"
'''
    assert [n for n, _ in sentences_in(source)] == [3, 4]
