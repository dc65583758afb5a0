"""CONSTRUCT as its authors compute it: requests, reply readings and scores, with no I/O.

Goh & Mueller (2026) score a structured output with the open-source TLM (``trustworthy-llm``
0.0.3). Every definition of TLM's is taken from TLM itself (:mod:`construct_eval.scorers.tlm_source`):
the templates' prompts, reply schemas, reading patterns and score mappings, the presets, the
weights, field scores, thresholds, the user request's wording, the consistency schema, the
harmonic mean, the rescaling and the Jaccard similarity. What this module adds is what TLM does
not export as a function of one output's replies, so that the package's engine can make the
calls (cache, resume, budget, batch) and score an output from its own calls alone, in [0, 1]:

- **Requests** (as ``tlm/utils/completion_utils.py``, ``_build_litellm_params``, builds them):
  the template's prompt as the only message, TLM's reply budget, TLM's temperature where it sets
  one, and for the structured-output templates the reply schema TLM's pydantic model becomes.
- **Readings** (as ``_parse_completion`` and ``per_field_scoring_utils.py`` read a reply): a
  field listed as incorrect takes TLM's incorrect-field score and every other its correct-field
  score; a per-field template maps each field's rating with the template's own mapping and scores
  the reply as their harmonic mean; the argument template's score is read by its own patterns.
  Where TLM raises (a reply that is not JSON, a key it indexes missing), the output is
  :class:`Unreadable` here.
- **Scores** (as ``self_reflection_scoring_utils.py``, ``consistency_scoring_utils.py``,
  ``indicator_scoring_utils.py``, ``trustworthiness_scoring_utils.py``,
  ``per_field_scoring_utils.compute_field_metadata`` and ``explainability_utils.py`` combine
  them, each over TLM's ``Completion`` objects): self-reflection is the mean of the templates'
  scores; observed consistency the mean Jaccard similarity with the samples, the indicator the
  share of identical samples; the trust score the weighted mean of the parts that exist; each
  field's score the mean of the templates that scored it, rescaled from its possible range; the
  explanation as TLM words it.

Where this differs from TLM on purpose (``docs/design.md``, "CONSTRUCT as its authors compute
it"): a failed call leaves the output unscored and is made again on resume (TLM 0.0.3 raises on
it), and a reasoning model's hidden ``reasoning_content`` is not read (TLM reads it as a
template's explanation). ``tests/test_construct_equivalence.py`` runs TLM itself on the same
replies and holds every request and score equal.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from construct_eval.scorers import tlm_source as tlm
from construct_eval.scorers.tlm_source import Kind, Template

# --------------------------------------------------------------------------- configuration

PRESETS = tlm.PRESETS
REASONING_EFFORTS = tlm.REASONING_EFFORTS
TEMPLATE_IDS = tuple(tlm.TEMPLATE_IDS.values())


class ConstructConfigError(ValueError):
    """A preset, reasoning effort or output TLM's structured-output workflow cannot score."""


class Unreadable(ValueError):
    """A reply TLM cannot read: TLM raises and gives the output no score; so does ``construct``."""


@dataclass(frozen=True)
class Config:
    """One CONSTRUCT configuration: the preset and the reasoning effort it resolves to."""

    preset: str = "medium"
    reasoning_effort: str | None = None  # None: the preset's (``high`` for structured outputs)

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise ConstructConfigError(f"unknown CONSTRUCT preset {self.preset!r}; choose from {list(PRESETS)}")
        if self.reasoning_effort is not None and self.reasoning_effort not in REASONING_EFFORTS:
            raise ConstructConfigError(
                f"unknown reasoning effort {self.reasoning_effort!r}; choose from {list(REASONING_EFFORTS)}"
            )
        if self.reasoning == "none":
            raise ConstructConfigError(
                f"preset {self.preset!r} sets no reasoning, and TLM's per-field templates refuse to score without"
                " it ('Per-field scoring only supports reasoning'): give a reasoning effort (low, medium or high)"
            )

    @property
    def reasoning(self) -> str:
        return self.reasoning_effort or tlm.preset_reasoning(self.preset)

    @property
    def consistency_samples(self) -> int:
        return tlm.consistency_completions(self.preset)

    @property
    def calls(self) -> int:
        """Model calls per output: the reflection templates and the consistency samples."""
        return len(TEMPLATE_IDS) + self.consistency_samples

    def describe(self) -> dict[str, Any]:
        return {"preset": self.preset, "reasoning_effort": self.reasoning, "calls_per_output": self.calls}


def templates(reasoning: str = "high") -> tuple[Template, ...]:
    """TLM's five structured-output reflection templates, in TLM's order."""
    return tlm.templates(reasoning)


def template(template_id: str, reasoning: str = "high") -> Template:
    for t in templates(reasoning):
        if t.id == template_id:
            return t
    raise KeyError(f"unknown CONSTRUCT template {template_id!r}; choose from {list(TEMPLATE_IDS)}")


def _map(t: Template, raw: Any) -> float:
    """The template's own score mapping; where TLM's mapping raises on a value, TLM cannot read it."""
    try:
        return float(t.score_mapper(raw))
    except (AttributeError, TypeError) as exc:
        raise Unreadable(f"{t.id}: a rating TLM's mapping cannot read ({type(raw).__name__}: {exc})") from None


# --------------------------------------------------------------------------- requests


def response_format(schema: Mapping[str, Any] | None, name: str = "output") -> dict[str, Any]:
    """The ``response_format`` TLM is given for an output of ``schema`` (its workflow switch)."""
    if schema is None:
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema)}}


def user_request(messages: Sequence[Mapping[str, str]], fmt: Mapping[str, Any]) -> str:
    """TLM's ``format_user_request``: the messages, then the response format's schema."""
    return tlm.user_request([dict(m) for m in messages], fmt)


def answer_keys(answer: str) -> list[str]:
    """The output's top-level keys, read as TLM reads them (JSON, else a Python literal)."""
    try:
        obj = json.loads(answer)
    except ValueError:
        try:
            obj = ast.literal_eval(answer)
        except (ValueError, SyntaxError) as exc:
            raise ConstructConfigError(f"the output is not a JSON object: {exc}") from None
    if not isinstance(obj, dict):
        raise ConstructConfigError(f"the output is a JSON {type(obj).__name__}, and TLM scores JSON objects only")
    private = [k for k in obj if str(k).startswith("_")]
    if private:  # pydantic's create_model refuses such names, and TLM raises
        raise ConstructConfigError(f"TLM cannot score fields whose names start with '_': {private}")
    return [str(k) for k in obj]


def reply_schema(template: Template, answer: str) -> tuple[dict[str, Any] | None, str]:
    """The strict JSON schema of a template's reply to ``answer`` and its name, as TLM's request
    carries them (``(None, "")`` for the argument template, which takes free text)."""
    made = template.reply_schema(answer)
    return (None, "") if made is None else made


@dataclass(frozen=True)
class Request:
    """One call as TLM makes it: the messages and the parameters it sets (None: not sent)."""

    template: str  # a template id, or "consistency"
    messages: list[dict[str, str]]
    max_tokens: int = 512  # TLM's reply budget (``TokenSettings.MAX_TOKENS``; every request passes it)
    temperature: float | None = None
    schema: dict[str, Any] | None = None
    schema_name: str = ""


def reflection_requests(
    messages: Sequence[Mapping[str, str]], fmt: Mapping[str, Any], answer: str, config: Config
) -> list[Request]:
    """The five reflection calls for one output (``SelfReflectionCompletionGenerator``)."""
    answer = answer.strip()  # TLM strips the reply it scores
    answer_keys(answer)  # an output TLM cannot score is refused before any call
    question = user_request(messages, fmt)
    words = tlm.max_explanation_words(config.reasoning)
    budget = tlm.max_tokens()
    out = []
    for t in templates(config.reasoning):
        text = t.prompt.format(question=question, answer=answer, max_explanation_words=words)
        schema, name = reply_schema(t, answer)
        out.append(Request(t.id, [{"role": "user", "content": text}], budget, t.temperature, schema, name))
    return out


def consistency_schema(fmt: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """TLM's ``add_explanation_field``: the output's schema under ``answer``, beside an
    ``explanation``; and its name."""
    try:
        made = tlm.consistency_format(fmt)["json_schema"]
    except (KeyError, TypeError):
        raise ConstructConfigError("observed consistency needs the output's JSON schema (response_format)") from None
    return dict(made["schema"]), str(made["name"])


def consistency_requests(
    messages: Sequence[Mapping[str, str]], fmt: Mapping[str, Any], config: Config
) -> list[Request]:
    """The observed-consistency samples (``ObservedConsistencyCompletionGenerator``): the user's
    messages again with an explanation asked beside the answer; no temperature of TLM's own."""
    if not config.consistency_samples:
        return []
    schema, name = consistency_schema(fmt)
    budget = tlm.max_tokens()
    return [
        Request("consistency", [dict(m) for m in messages], budget, None, schema, name)
        for _ in range(config.consistency_samples)
    ]


# --------------------------------------------------------------------------- reading replies


@dataclass(frozen=True)
class FieldReading:
    score: float
    explanation: str | None = None


@dataclass(frozen=True)
class Reflection:
    """One template's reply, read: its score (None where TLM finds none), its per-field readings
    (incorrect-fields and per-field templates), and its explanation (argument template)."""

    template: str
    score: float | None
    fields: dict[str, FieldReading] | None = None
    explanation: str | None = None

    @property
    def kind(self) -> Kind:
        return template(self.template).kind


def _first_match(patterns: Sequence[str], text: str, flags: int) -> str | None:
    """The first of a template's patterns that matches, as TLM's parser reads it (group 1)."""
    for pattern in patterns:
        if match := re.search(pattern, text, flags):
            return match.group(1).strip()
    return None


def _json(text: str, template: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise Unreadable(f"{template}: the reply is not JSON ({exc})") from None


def _need(obj: Any, key: str, template: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise Unreadable(f"{template}: the reply has no {key!r}")
    return obj[key]


def _explanation(value: Any, template: str) -> str | None:
    if value is not None and not isinstance(value, str):  # TLM's FieldMetadata refuses it
        raise Unreadable(f"{template}: an explanation must be a string, got {type(value).__name__}")
    return value


def read_reflection(template: Template, text: str | None, answer: str) -> Reflection:
    """A template's reply read as TLM reads it (``_parse_completion``); raises :class:`Unreadable`
    where TLM raises."""
    message, answer = (text or "").strip(), answer.strip()
    if template.kind == "argument":
        explanation = _first_match(template.explanation_patterns, message, template.flags)
        raw = _first_match(template.score_patterns, message, template.flags)
        return Reflection(template.id, None if raw is None else _map(template, raw), None, explanation)
    obj = _json(message, template.id)
    if template.kind == "incorrect_fields":
        listed = _need(obj, "incorrect_fields", template.id)
        try:
            flagged = {item["field_name"]: item["explanation"] for item in listed}
        except (KeyError, TypeError) as exc:
            raise Unreadable(f"{template.id}: an incorrect field without its name or explanation ({exc!r})") from None
        right, wrong = tlm.field_scores()
        fields = {
            k: FieldReading(wrong, _explanation(flagged[k], template.id)) if k in flagged else FieldReading(right)
            for k in answer_keys(answer)
        }
        raw = str(_need(obj, str(template.overall_key), template.id))
        return Reflection(template.id, _map(template, raw), fields)
    if not isinstance(obj, dict):
        raise Unreadable(f"{template.id}: the reply is a JSON {type(obj).__name__}, not an object")
    fields = {}
    for name, data in obj.items():
        raw = _need(data, str(template.field_key), f"{template.id}, field {name!r}")
        try:
            score = _map(template, raw)
        except Unreadable as exc:
            raise Unreadable(f"{template.id}, field {name!r}: {exc}") from None
        explanation = _explanation(_need(data, "explanation", f"{template.id}, field {name!r}"), template.id)
        fields[name] = FieldReading(score, explanation)
    return Reflection(template.id, tlm.harmonic_mean([f.score for f in fields.values()]), fields)


def read_consistency(text: str | None) -> str:
    """A consistency sample's answer as TLM keeps it: the ``answer`` part printed as a Python
    value (``extract_structured_output_field``), else the whole reply."""
    message = (text or "").strip()
    for parse in (ast.literal_eval, json.loads):
        try:
            return str(parse(message)["answer"]) or message  # TLM keeps ``answer or message_content``
        except Exception:  # TLM tries both readings and falls back on any failure
            continue
    return message


def sample_answer(output: Any) -> str:
    """A stored sample's output as a consistency answer: printed as TLM prints a parsed answer."""
    return str(output)


# --------------------------------------------------------------------------- scores


def jaccard_similarity(answer: str, comparison: str) -> float:
    """TLM's ``jaccard_similarity`` for structured outputs."""
    return tlm.jaccard_similarity(answer, comparison)


@dataclass(frozen=True)
class FieldScore:
    score: float
    explanation: str | None


@dataclass(frozen=True)
class Scores:
    """One output's CONSTRUCT scores: the trust score (None where no part could be computed),
    each field's score and explanation, TLM's explanation, and the parts that made the score."""

    trust: float | None
    fields: dict[str, FieldScore]
    explanation: str
    parts: dict[str, float | None] = field(default_factory=dict)


def weights_for(model: str | None, *, perplexity: bool) -> dict[str, float]:
    """``get_score_weights``: the model's weights; the perplexity weight dropped without one."""
    w = tlm.weights(model)
    if not perplexity:
        w["perplexity"] = math.nan
    return w


def _field_scores(reflections: Sequence[Reflection]) -> dict[str, FieldScore]:
    """TLM's ``compute_field_metadata`` over the templates that scored fields: per field, the mean
    of their readings rescaled from the range they could give; the explanation of the lowest
    reading that has one."""
    scored = [(r.kind, r.fields) for r in reflections if r.fields is not None]
    return {k: FieldScore(v, e) for k, (v, e) in tlm.field_metadata(scored).items()}


def score_output(
    answer: str,
    reflections: Sequence[Reflection],
    *,
    samples: Sequence[str] = (),
    perplexity: float | None = None,
    model: str | None = None,
) -> Scores:
    """The trust score, field scores and explanation of one output from its own readings
    (``SelfReflectionScoreComputation``, ``ConsistencyScoreComputation``,
    ``TrustworthinessScoreComputation``, ``ResponseAssembly``).

    ``answer``: the output as a JSON string; ``reflections``: the five templates' readings, in
    TLM's order; ``samples``: the consistency answers (:func:`read_consistency`); ``perplexity``:
    the output's token probability, where the caller has it (TLM's ``response["perplexity"]``);
    ``model``: the judge model's name, for its weights.
    """
    answer = answer.strip()
    values = [math.nan if r.score is None else r.score for r in reflections]
    self_reflection = float(np.nanmean(values)) if not np.isnan(values).all() else math.nan
    similarities = [jaccard_similarity(answer, s) for s in samples]
    consistency = float(np.nanmean(similarities)) if similarities and not np.isnan(similarities).all() else math.nan
    indicator = float(np.mean([answer == s for s in samples])) if samples else math.nan
    weights = weights_for(model, perplexity=perplexity is not None)
    parts = {
        "consistency": consistency,
        "indicator": indicator,
        "self_reflection": self_reflection,
        "prompt_eval": math.nan,
        "perplexity": math.nan if perplexity is None else perplexity,
    }
    active = [(v, weights[k]) for k, v in parts.items() if not math.isnan(v)]
    if active:
        trust: float | None = float(np.average([v for v, _ in active], weights=[w for _, w in active]))
    else:
        trust = None
    explanation = tlm.explanation(trust, [(r.score, r.explanation) for r in reflections], list(samples),
                                  similarities, consistency, answer)  # fmt: skip
    shown = {k: (None if math.isnan(v) else v) for k, v in parts.items() if k != "prompt_eval"}
    return Scores(trust, _field_scores(reflections), explanation, shown)


__all__ = [
    "TEMPLATE_IDS",
    "Config",
    "ConstructConfigError",
    "Reflection",
    "Request",
    "Scores",
    "Unreadable",
    "consistency_requests",
    "read_consistency",
    "read_reflection",
    "reflection_requests",
    "response_format",
    "score_output",
]
