"""Prose as Jinja2 templates cut into named sections: what the findings and the figure captions share.

A template words facts computed in Python (numbers already formatted, booleans for which
comparisons are apart); its text is cut into sections, each opened by a line ``== <section>``.
Whitespace runs inside a section collapse to one space, so a template may break its lines
anywhere a space belongs, and a misspelt name is an error (``StrictUndefined``), never an empty
string in the prose. The findings (:mod:`construct_eval.studies.findings.wording`) and the
captions (:mod:`construct_eval.paper.captions`) each keep their own folder and filters; this
module holds only the environment and the cutting, so both read one rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

SECTION = re.compile(r"^== (\w+)[ \t]*$", re.MULTILINE)
"""A section's opening line: ``== answer``."""


def environment(folder: Path, filters: Mapping[str, Callable[..., Any]] | None = None) -> Any:
    """A Jinja2 environment over the templates in ``folder``, with ``filters``: undefined names
    raise, block tags leave no blank lines behind, nothing is escaped (Markdown, not HTML)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,  # a misspelt name is an error, not an empty string in the prose
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown, not HTML
    )
    env.filters.update(filters or {})
    return env


def split_sections(text: str, name: str = "template") -> list[tuple[str, str]]:
    """``[(section, text), ...]`` from a rendered template's ``== <section>`` lines, in order, each
    section's whitespace collapsed to single spaces (a name may repeat; text before the first
    section must be blank: it holds only ``{% set %}`` blocks)."""
    parts = SECTION.split(text)
    if len(parts) < 3:
        raise ValueError(f"{name}: no '== <section>' line")
    if parts[0].strip():
        raise ValueError(f"{name}: text before its first section: {parts[0].strip()[:60]!r}")
    return [(key, " ".join(body.split())) for key, body in zip(parts[1::2], parts[2::2], strict=True)]


LINE_BREAK = re.compile(r"[ \t]*\n\s*")


def one_line(text: str) -> str:
    """A macro's rendering as one line: each line break of the template, with the spaces and
    blank lines around it, read as one space; ends stripped. Spaces inside a line (a value's own)
    are kept."""
    return LINE_BREAK.sub(" ", text).strip()


def phrase(template: Any, name: str, /, *args: Any, **facts: Any) -> str:
    """Macro ``name`` of a loaded ``template`` called with ``args`` and ``facts``, as one line
    (:func:`one_line`): what the notebooks' sentences and the captions' phrases both render."""
    return one_line(str(getattr(template.module, name)(*args, **facts)))
