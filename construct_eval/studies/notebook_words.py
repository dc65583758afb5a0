"""The notebooks' sentences: Jinja2 macros over numbers read from stored tables.

The notebook helpers (``studies/*_notebook.py``) read a run's stored tables and build the tables a
notebook shows; the sentences around them are worded in ``templates/<notebook>.md.j2``, one macro
per sentence or paragraph, so that a wording change touches a template only. A macro is given the
cells it quotes, already read (and, where a table formats them, formatted); its text has its
whitespace runs collapsed to one space, so a template may break its lines anywhere a space belongs.
Undefined names raise (:func:`construct_eval.templating.environment`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from construct_eval.templating import environment, phrase

TEMPLATES = Path(__file__).with_name("templates")


def _count(n: Any) -> str:
    """A count with thousands separators: ``1,234`` (a cell may hold it as ``"1234.0"``)."""
    return f"{int(float(n)):,}"


def _listed(words: Any) -> str:
    """Words as a list is read aloud: ``a``, ``a and b``, ``a, b and c``."""
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


@cache
def _environment() -> Any:
    """The one environment over ``templates/``, with the filters every template here may use."""
    return environment(TEMPLATES, {"count": _count, "listed": _listed})


def say(notebook: str, sentence: str, /, *args: Any, **facts: Any) -> str:
    """Macro ``sentence`` of ``templates/<notebook>.md.j2`` worded from ``args`` and ``facts``: one
    line, each line break of the template (with the spaces around it) read as one space; the
    values' own spacing is kept."""
    return phrase(_environment().get_template(f"{notebook}.md.j2"), sentence, *args, **facts)


def document(name: str, /, **facts: Any) -> str:
    """``templates/<name>.md.j2`` rendered whole from ``facts``: a Markdown file whose lines are the
    template's own (no whitespace collapsed), without its last line break."""
    text = _environment().get_template(f"{name}.md.j2").render(**facts)
    return text.removesuffix("\n")  # its last line's break: the caller ends the file
