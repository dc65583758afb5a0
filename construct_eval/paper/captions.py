"""A main figure's caption as parts: facts computed in Python, worded by a template.

Each captioned figure has a template ``templates/<figure>.md.j2`` that words the facts its
function in :mod:`~construct_eval.paper.messages` computes (numbers already formatted, booleans
for which comparisons are apart, the n's). The template has one ``== answer`` section, the
figure's answer to its question (the caption), and an ``== also`` section for each further thing
the figure draws ("Also in the figure" in ``figures.md``); an ``also`` section that words to
nothing is left out. A template whose answer opens with one clause that is the figure's message
and goes on with what qualifies it names that clause in a ``== headline`` section (the answer must
begin with it): the README and the notebooks show it alone. A wording change touches the template
only; the parts are kept as they were written (``manifest.json`` stores them beside the message),
so nothing cuts prose back into sentences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from construct_eval.templating import environment, phrase, split_sections

TEMPLATES = Path(__file__).with_name("templates")


class Caption(str):
    """A figure's message, the answer and each further sentence joined by a space, that keeps its
    parts: ``answer`` (the caption), ``also`` (what else the figure draws, one sentence each) and
    ``headline`` (the answer's first clause, the one message, without its full stop; the answer
    itself where the template names none). A ``str``, so whatever reads a message as text reads it
    unchanged."""

    answer: str
    also: tuple[str, ...]
    headline: str

    def __new__(cls, answer: str, also: Sequence[str] = (), headline: str | None = None) -> Caption:
        text = super().__new__(cls, " ".join([answer, *also]) if answer else "")
        text.answer, text.also = answer, tuple(also)
        text.headline = (headline if headline is not None else answer).rstrip(".")
        return text

    def parts(self) -> dict[str, Any]:
        """The parts as ``manifest.json`` stores them beside the message."""
        return {"headline": self.headline, "answer": self.answer, "also": list(self.also)}

    def with_also(self, sentence: str) -> Caption:
        """This caption with one more sentence of what the figure draws (or leaves out)."""
        return Caption(self.answer, [*self.also, sentence], self.headline)


@cache
def _environment() -> Any:
    return environment(TEMPLATES, {"tick": lambda text: f"`{text}`"})


def document(name: str, /, **facts: Any) -> str:
    """``templates/<name>.md.j2`` rendered whole from ``facts``, its lines as the template writes
    them (``figures.md``: what each file of a figure set shows)."""
    return _environment().get_template(f"{name}.md.j2").render(**facts)


def macro(template: str, name: str, /, *args: Any) -> str:
    """Macro ``name`` of ``templates/<template>.md.j2`` called with ``args``, as one line
    (:func:`~construct_eval.templating.one_line`): a phrase a caption's facts or a figure's title carry."""
    return phrase(_environment().get_template(f"{template}.md.j2"), name, *args)


def render(name: str, facts: Mapping[str, Any]) -> Caption:
    """The caption of figure ``name`` (``templates/<name>.md.j2``) worded from ``facts``: its one
    ``answer`` section, its ``headline`` if it names one, and its non-empty ``also`` sections, in order."""
    return caption_of(_environment().get_template(f"{name}.md.j2").render(**facts), name)


def caption_of(text: str, name: str = "caption") -> Caption:
    """The caption in a rendered template's ``text``: its one ``answer`` section, which must begin
    with its ``headline`` section where it has one, and its non-empty ``also`` sections, in order."""
    parts = split_sections(text, name)
    keys = [key for key, _ in parts]
    if set(keys) - {"headline", "answer", "also"} or keys.count("answer") != 1 or keys.count("headline") > 1:
        raise ValueError(
            f"{name}: a caption has one 'answer' section, at most one 'headline' and 'also' sections, not {keys}"
        )
    answer = next(body for key, body in parts if key == "answer")
    headline = next((body for key, body in parts if key == "headline"), None)
    if headline is not None and not answer.startswith(headline):
        raise ValueError(f"{name}: the answer does not begin with its headline {headline[:60]!r}")
    return Caption(answer, [body for key, body in parts if key == "also" and body], headline)
