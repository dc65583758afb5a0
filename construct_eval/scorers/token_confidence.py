"""The token log-prob baseline: confidence per field from the generator's own token log-probs.

The paper's third baseline. The generator's reply is a JSON text; each field's value
occupies a span of it, and the tokens that overlap that span carry the generator's
log-probs for writing that value. A field's confidence is the mean (and, recorded too, the
minimum) log-prob of those tokens; a document's is the minimum over its fields.

The mapping from tokens to nested field paths is exact: spans come from a JSON scanner
that tracks positions (:func:`value_spans`), and token offsets from the tokens' text,
which must join to the reply (otherwise the document is reported as not mappable, never
guessed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.fields import FieldPath, format_path
from construct_eval.llm.logprobs import token_spans
from construct_eval.scorer_registry import TOKEN_LOGPROB

FAMILY = TOKEN_LOGPROB.family
"""The scorer family of this module's score rows (declared in :mod:`construct_eval.scorer_registry`)."""
_WS = " \t\n\r"


class SpanError(ValueError):
    """Text that is not one JSON value."""


class _Scanner:
    def __init__(self, text: str):
        self.text = text
        self.spans: dict[FieldPath, tuple[int, int]] = {}

    def ws(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in _WS:
            i += 1
        return i

    def value(self, i: int, path: FieldPath) -> int:
        i = self.ws(i)
        if i >= len(self.text):
            raise SpanError("unexpected end of text")
        c = self.text[i]
        if c == "{":
            end = self.obj(i, path)
        elif c == "[":
            end = self.arr(i, path)
        elif c == '"':
            end = self.string(i)
        else:
            end = i
            while end < len(self.text) and self.text[end] not in _WS + ",]}":
                end += 1
            if end == i:
                raise SpanError(f"no value at {i}")
        self.spans[path] = (i, end)
        return end

    def string(self, i: int) -> int:
        j = i + 1
        while j < len(self.text):
            c = self.text[j]
            if c == "\\":
                j += 2
                continue
            if c == '"':
                return j + 1
            j += 1
        raise SpanError("unterminated string")

    def obj(self, i: int, path: FieldPath) -> int:
        j = self.ws(i + 1)
        if self.text[j : j + 1] == "}":
            return j + 1
        while True:
            j = self.ws(j)
            end = self.string(j)
            key = json.loads(self.text[j:end])
            j = self.ws(end)
            if self.text[j : j + 1] != ":":
                raise SpanError(f"expected ':' at {j}")
            j = self.value(j + 1, (*path, key))
            j = self.ws(j)
            if self.text[j : j + 1] == ",":
                j += 1
                continue
            if self.text[j : j + 1] == "}":
                return j + 1
            raise SpanError(f"expected ',' or '}}' at {j}")

    def arr(self, i: int, path: FieldPath) -> int:
        j = self.ws(i + 1)
        if self.text[j : j + 1] == "]":
            return j + 1
        k = 0
        while True:
            j = self.value(j, (*path, k))
            k += 1
            j = self.ws(j)
            if self.text[j : j + 1] == ",":
                j += 1
                continue
            if self.text[j : j + 1] == "]":
                return j + 1
            raise SpanError(f"expected ',' or ']' at {j}")


def value_spans(text: str) -> dict[FieldPath, tuple[int, int]]:
    """Character span of every value (objects, arrays, items, leaves) in a JSON text, by path."""
    scanner = _Scanner(text)
    end = scanner.value(0, ())
    if scanner.ws(end) != len(text):
        raise SpanError(f"text continues after the JSON value at {end}")
    return scanner.spans


def token_offsets(tokens: Sequence[str], text: str) -> list[int] | None:
    """Start offset of each token in ``text``; None when the tokens do not join to the text."""
    if "".join(tokens) != text:
        return None
    return [start for start, _ in token_spans(tokens)]


@dataclass(frozen=True)
class FieldConfidence:
    field: str
    mean_logprob: float
    min_logprob: float
    n_tokens: int

    @property
    def score(self) -> float:
        """exp(mean log-prob): the geometric-mean token probability, in (0, 1]."""
        return math.exp(self.mean_logprob)


def field_confidences(
    raw: str,
    token_logprobs: Sequence[Sequence[Any]],
    fields: Sequence[FieldPath],
) -> tuple[dict[str, FieldConfidence], str | None]:
    """Confidence of each field in ``fields`` (any granularity), or ({}, why not)."""
    tokens = [str(t[0]) for t in token_logprobs]
    lps = [float(t[1]) for t in token_logprobs]
    offsets = token_offsets(tokens, raw)
    if offsets is None:
        return {}, "tokens do not join to the reply text"
    try:
        spans = value_spans(raw)
    except SpanError as exc:
        return {}, f"reply is not one JSON value: {exc}"
    out: dict[str, FieldConfidence] = {}
    for path in fields:
        span = spans.get(tuple(path))
        if span is None:
            continue
        start, end = span
        chosen = [lp for off, tok, lp in zip(offsets, tokens, lps, strict=True) if off < end and off + len(tok) > start]
        if chosen:
            name = format_path(path)
            out[name] = FieldConfidence(name, sum(chosen) / len(chosen), min(chosen), len(chosen))
    return out, None


def document_confidence(confidences: Mapping[str, FieldConfidence]) -> float | None:
    """Minimum field score: a document is as trustworthy as its least certain field."""
    return min((c.score for c in confidences.values()), default=None)


def score_rows(
    outputs: Sequence[Mapping[str, Any]], granularities: Sequence[str] = ("top", "leaf")
) -> list[dict[str, Any]]:
    """Score rows (scorer ``token_logprob``) for every output that has token log-probs.

    Field rows hold exp(mean log-prob) of the field's tokens; the document row holds the
    minimum over leaf fields. Outputs without log-probs, or whose tokens cannot be mapped,
    get one row with ``score`` None and the reason, so they are counted, never guessed.
    """
    from construct_eval.fields import DOCUMENT, field_paths

    rows: list[dict[str, Any]] = []
    for out in outputs:
        base = {"id": out["id"], "scorer": FAMILY}
        if "output" not in out:
            continue
        lps, raw = out.get("token_logprobs"), out.get("raw")
        if not lps or raw is None:
            rows.append(
                {**base, "field": DOCUMENT, "granularity": "doc", "score": None, "reason": "no token log-probs"}
            )
            continue
        leaf = field_paths(None, out["output"], granularity="leaf")
        leaf_conf, why = field_confidences(raw, lps, leaf)
        if why is not None:
            rows.append({**base, "field": DOCUMENT, "granularity": "doc", "score": None, "reason": why})
            continue
        doc = document_confidence(leaf_conf)
        rows.append({**base, "field": DOCUMENT, "granularity": "doc", "score": doc, "n_tokens": len(lps)})
        for gran in granularities:
            conf = (
                leaf_conf
                if gran == "leaf"
                else field_confidences(raw, lps, field_paths(None, out["output"], granularity=gran))[0]
            )
            for name, c in conf.items():
                rows.append(
                    {
                        **base,
                        "field": name,
                        "granularity": gran,
                        "score": c.score,
                        "min_logprob": round(c.min_logprob, 5),
                        "n_tokens": c.n_tokens,
                    }
                )
    return rows


def logprob_run(run: RunDir) -> list[dict[str, Any]]:
    """The token log-prob scores of a run's generated outputs (``token_logprob`` rows, replacing
    earlier ones); outputs without log-probs get a row without a score and the reason."""
    rows = score_rows(run.read("outputs"))
    run.replace_scorers(rows, {FAMILY})
    return rows
