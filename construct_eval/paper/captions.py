"""A main figure's caption as parts: facts computed in Python, worded by a template.

Each captioned figure has a template ``templates/<figure>.md.j2`` that words the facts its
function in :mod:`~construct_eval.paper.messages` computes (numbers already formatted, booleans
for which comparisons are apart, the n's). The template has one ``== answer`` section, the
figure's answer to its question (the caption), and an ``== also`` section for each further thing
the figure draws ("Also in the figure" in ``figures.md``); an ``also`` section that words to
nothing is left out. A wording change touches the template only; the sentences are never cut back
out of the prose, since the parts are kept as they were written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from construct_eval.templating import environment, split_sections

TEMPLATES = Path(__file__).with_name("templates")


class Caption(str):
    """A figure's message, the answer and each further sentence joined by a space, that keeps its
    parts: ``answer`` (the caption) and ``also`` (what else the figure draws, one sentence each).
    A ``str``, so whatever reads a message as text reads it unchanged."""

    answer: str
    also: tuple[str, ...]

    def __new__(cls, answer: str, also: Sequence[str] = ()) -> Caption:
        text = super().__new__(cls, " ".join([answer, *also]) if answer else "")
        text.answer, text.also = answer, tuple(also)
        return text


@cache
def _environment() -> Any:
    return environment(TEMPLATES)


def render(name: str, facts: Mapping[str, Any]) -> Caption:
    """The caption of figure ``name`` (``templates/<name>.md.j2``) worded from ``facts``: its one
    ``answer`` section and its non-empty ``also`` sections, in order."""
    text = _environment().get_template(f"{name}.md.j2").render(**facts)
    parts = split_sections(text, name)
    unknown = {key for key, _ in parts} - {"answer", "also"}
    answers = [body for key, body in parts if key == "answer"]
    if unknown or len(answers) != 1:
        raise ValueError(f"{name}: a caption has one 'answer' section and 'also' sections, not {[k for k, _ in parts]}")
    return Caption(answers[0], [body for key, body in parts if key == "also" and body])
