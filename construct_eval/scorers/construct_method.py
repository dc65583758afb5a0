"""CONSTRUCT as its authors compute it: requests, reply readings and scores, with no I/O.

Goh & Mueller (2026) score a structured output with the open-source TLM (``trustworthy-llm``
0.0.3, https://github.com/cleanlab/tlm, Apache-2.0). This module restates its structured-output
workflow (``TLM.score`` with ``response_format`` set) to the same definitions, so that the
package's engine can make the calls (cache, resume, budget, batch) and one output is scored from
its own calls alone, in [0, 1]. Each definition names the TLM file it follows:

- **Presets** (``tlm/config/presets.py``, ``tlm/config/base.py``): every preset runs all five
  structured-output reflection templates (``num_self_reflection_completions`` is -1 or 0, and
  TLM truncates the list only for counts above 1); ``high`` adds 4 observed-consistency
  completions, ``best`` 8. The structured-output workflow reasons by default (``high``);
  ``base`` and ``low`` set no reasoning, with which TLM's per-field templates refuse to run, so
  they need a reasoning effort given.
- **Requests** (``tlm/utils/completion_utils.py``, ``_build_litellm_params``): the template's
  prompt as the only message, ``max_tokens`` 512, ``temperature`` 0 only for the argument
  template (the others set none, so the endpoint's default applies), and for the four
  structured-output templates a strict JSON schema built from the output's top-level keys
  (``construct_response_format``).
- **Readings** (``_parse_completion``, ``tlm/utils/scoring/per_field_scoring_utils.py``,
  ``tlm/templates/score_mapping.py``): a field listed as incorrect scores 0.1, every other 0.9,
  and the template's overall score is its 0-100 or 0-10 rating mapped; a per-field template
  maps each field's certainty or 0-100 score and scores the reply as their harmonic mean; the
  argument template's ``<score>`` is read by TLM's regular expressions. Where TLM raises (a
  reply that is not JSON, a key it indexes missing), the output is :class:`Unreadable` here.
- **Scores** (``self_reflection_scoring_utils.py``, ``consistency_scoring_utils.py``,
  ``jaccard_utils.py``, ``indicator_scoring_utils.py``, ``trustworthiness_scoring_utils.py``,
  ``tlm/config/score_weights.py``): self-reflection is the mean of the templates' scores;
  observed consistency the Jaccard similarity of the output's words with each sample's (JSON
  keys discounted), the indicator the share of identical samples; the trust score the weighted
  mean of the parts that exist (weights per model, the default model's otherwise); each field's
  score the mean of the templates that scored it, rescaled from its possible range to
  [0.001, 0.999] (``compute_field_metadata``); the explanation as
  ``tlm/utils/explainability_utils.py`` writes it.

Where this differs from TLM on purpose (``docs/design.md``, "CONSTRUCT as its authors compute
it"): a failed call leaves the output unscored and is made again on resume (TLM 0.0.3 raises on
it), and a reasoning model's
hidden ``reasoning_content`` is not read (TLM reads it as a template's explanation).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from construct_eval.scorers import construct_prompts as prompts

# --------------------------------------------------------------------------- configuration

PRESETS = ("base", "low", "medium", "high", "best")
REASONING_EFFORTS = ("none", "low", "medium", "high")
MAX_EXPLANATION_WORDS = {"none": 0, "low": int(40 / 0.8), "medium": int(100 / 0.8), "high": int(300 / 0.8)}
"""``tlm/config/presets.py``, ``REASONING_EFFORT_TO_MAX_EXPLANATION_WORDS``."""
CONSISTENCY_COMPLETIONS = {"base": 0, "low": 0, "medium": 0, "high": 4, "best": 8}
"""``DEFAULT_CONFIG_FOR_QUALITY_AND_WORKFLOW`` (the structured-output workflow takes the default's)."""
PRESET_REASONING = {"base": "none", "low": "none"}
"""Presets that set a reasoning effort (``DEFAULT_CONFIG_FOR_QUALITY``); the rest take the
structured-output workflow's default, ``high`` (``BaseConfig.from_input``)."""
MAX_TOKENS = 512
"""``tlm/config/defaults.py``, ``TokenSettings.MAX_TOKENS``: every call's reply budget."""
CORRECT_FIELD_SCORE, INCORRECT_FIELD_SCORE = 0.9, 0.1
"""``STRUCTURED_OUTPUT_CORRECT_FIELD_SCORE``, ``STRUCTURED_OUTPUT_INCORRECT_FIELD_SCORE``."""
EXPLAINABILITY_THRESHOLD, SELF_REFLECTION_EXPLAINABILITY_THRESHOLD, CONSISTENCY_EXPLAINABILITY_THRESHOLD = (
    0.8,
    0.85,
    0.85,
)
"""``tlm/config/defaults.py``, ``ScoreSettings``."""
ASYMPTOTIC_EPSILON = 1e-3
"""``tlm/utils/math_utils.py``: scores are rescaled into [epsilon, 1 - epsilon]."""

_WEIGHT_KEYS = ("consistency", "indicator", "self_reflection", "prompt_eval", "perplexity")
_W = dict[str, float]


def _weights(c: float, i: float, s: float, p: float, x: float) -> _W:
    return dict(zip(_WEIGHT_KEYS, (c, i, s, p, x), strict=True))


DEFAULT_WEIGHTS = _weights(0.32, 0.01, 0.47, 0.0, 0.2)
MODEL_WEIGHTS: dict[str, _W] = {
    "gpt-3.5-turbo-16k": _weights(0.51, 0.05, 0.17, 0.0, 0.27),
    "gpt-4": _weights(0.48, 0.01, 0.3, 0.0, 0.21),
    "gpt-4o": _weights(0.68, 0.01, 0.2, 0.0, 0.11),
    "gpt-4o-mini": _weights(0.51, 0.01, 0.3, 0.0, 0.18),
    "o1-preview": _weights(0.69, 0.01, 0.3, 0.0, 0.0),
    "claude-3-haiku": _weights(0.69, 0.01, 0.3, 0.0, 0.0),
    "claude-3-sonnet": _weights(0.59, 0.01, 0.4, 0.0, 0.0),
    "claude-3.5-sonnet": _weights(0.4, 0.01, 0.59, 0.0, 0.0),
}
"""``tlm/config/score_weights.py``, ``COMPONENT_SCORE_WEIGHTS[WorkflowType.DEFAULT]`` (the
structured-output workflow has none of its own); a model not listed takes the default model's."""


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
        return self.reasoning_effort or PRESET_REASONING.get(self.preset, "high")

    @property
    def consistency_samples(self) -> int:
        return CONSISTENCY_COMPLETIONS[self.preset]

    @property
    def calls(self) -> int:
        """Model calls per output: the reflection templates and the consistency samples."""
        return len(TEMPLATES) + self.consistency_samples

    def describe(self) -> dict[str, Any]:
        return {"preset": self.preset, "reasoning_effort": self.reasoning, "calls_per_output": self.calls}


# --------------------------------------------------------------------------- the templates

Kind = Literal["incorrect_fields", "per_field", "argument"]


@dataclass(frozen=True)
class Template:
    """One reflection template of the structured-output workflow, in TLM's order."""

    id: str
    tlm_class: str
    kind: Kind
    prompt: str
    schema_name: str = ""  # the JSON schema's name (TLM's pydantic model)
    score_key: str = ""  # the overall rating (incorrect-fields) or each field's (per-field)
    score_scale: Literal["100", "10", "certainty"] = "100"

    def prompt_for(self, reasoning: str) -> str:
        if self.kind == "argument" and reasoning == "none":
            return prompts.ARGUMENT_PROMPT
        return self.prompt


TEMPLATES: tuple[Template, ...] = (
    Template(
        "field-accuracy", "SelfReflectionSOFieldAccuracyConfig", "incorrect_fields", prompts.FIELD_ACCURACY_PROMPT,
        "ConfidenceModel", "confidence_score", "100",
    ),
    Template(
        "knowledge-gap", "SelfReflectionSOFieldKnowledgeGapConfig", "incorrect_fields", prompts.KNOWLEDGE_GAP_PROMPT,
        "RatingModel", "rating", "10",
    ),
    Template("argument", "ReflectionArgumentTemplate", "argument", prompts.ARGUMENT_PROMPT_WITH_REASONING),
    Template(
        "per-field-correctness", "ReflectionSOPerScoreCorrectnessTemplate", "per_field",
        prompts.PER_FIELD_CORRECTNESS_PROMPT, "PerFieldCorrectnessEvaluation", "confidence", "certainty",
    ),
    Template(
        "per-field-certainty", "ReflectionSOPerScoreCertaintyTemplate", "per_field",
        prompts.PER_FIELD_CERTAINTY_PROMPT, "PerFieldCertaintyEvaluation", "score", "100",
    ),
)  # fmt: skip
"""``SELF_REFLECTION_TEMPLATES_BY_WORKFLOW[WorkflowType.STRUCTURED_OUTPUT_SCORING]``."""
TEMPLATE_IDS = tuple(t.id for t in TEMPLATES)
CERTAINTY_LEVELS = ("Certain", "Mostly Certain", "Somewhat Certain", "Uncertain", "Likely Incorrect")


# --------------------------------------------------------------------------- score mappings


def score_100(x: Any) -> float:
    """``score_100_mapping``: a 0-100 score as a share (not clipped), 0.5 where it is no number."""
    try:
        return float(x) / 100
    except ValueError:
        return 0.5


def score_10(x: str) -> float:
    """``score_10_mapping``: "0".."10" (digits or words) in tenths, 0.5 otherwise."""
    words = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    table = {str(i): i / 10 for i in range(11)} | {w: i / 10 for i, w in enumerate(words)}
    table["10"] = table["ten"] = 1.0
    return table.get(x, 0.5)


def certainty(x: Any) -> float:
    """``certainty_mapping``: the five certainty levels, case-blind, 0.5 otherwise.

    TLM calls ``x.lower()``: a value that is not a string makes it raise, so it is unreadable here.
    """
    if not isinstance(x, str):
        raise Unreadable(f"a certainty level must be a string, got {type(x).__name__}")
    levels = dict(zip((c.lower() for c in CERTAINTY_LEVELS), (1.0, 0.75, 0.5, 0.25, 0.0), strict=True))
    return levels.get(x.lower(), 0.5)


def harmonic_mean(scores: Sequence[float]) -> float:
    """``math_utils.harmonic_mean``: with 1e-3 added to each score, capped at 1; 0 for none."""
    if not scores:
        return 0.0
    return min(1, len(scores) / sum(1 / (s + 1e-3) for s in scores))


def make_score_asymptotic(score: float) -> float:
    return ASYMPTOTIC_EPSILON + (1 - 2 * ASYMPTOTIC_EPSILON) * score


# --------------------------------------------------------------------------- requests


def response_format(schema: Mapping[str, Any] | None, name: str = "output") -> dict[str, Any]:
    """The ``response_format`` TLM is given for an output of ``schema`` (its workflow switch)."""
    if schema is None:
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema)}}


def user_request(messages: Sequence[Mapping[str, str]], fmt: Mapping[str, Any]) -> str:
    """``prompt_utils.format_user_request``: the messages, then the schema as Python prints a dict."""
    text = "Input Messages:\n" + "".join(f"{m['role']}: {m['content']}\n" for m in messages)
    if fmt:
        try:
            schema = fmt["json_schema"]["schema"]
        except KeyError:
            schema = fmt
        text += prompts.RESPONSE_FORMAT_PROMPT.format(response_format=schema)
    return text


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


def _strict(name: str, properties: dict[str, Any], required: list[str], defs: dict[str, Any] | None = None):
    body: dict[str, Any] = {}
    if defs:
        body["$defs"] = defs
    body |= {"properties": properties, "required": required, "title": name, "type": "object"}
    body["additionalProperties"] = False
    return body


def _title(key: str) -> str:
    """Pydantic's default title for a field (``key.replace("_", " ").title()``)."""
    return key.replace("_", " ").title()


def _one_of(values: Sequence[str]) -> dict[str, Any]:
    """A ``Literal`` of these values as pydantic writes it: ``const`` for one, ``enum`` for more."""
    return {"const": values[0]} if len(values) == 1 else {"enum": list(values)}


def reply_schema(template: Template, keys: Sequence[str]) -> dict[str, Any] | None:
    """The strict JSON schema of a template's reply (TLM's pydantic model, as the OpenAI client
    writes it), or None for the argument template, which takes free text."""
    text = {"title": "Explanation", "type": "string"}
    if template.kind == "argument":
        return None
    if template.kind == "incorrect_fields":
        field_def = _strict(
            "IncorrectField",
            {"field_name": _one_of(keys) | {"title": "Field Name", "type": "string"}, "explanation": text},
            ["field_name", "explanation"],
        )
        top = 100 if template.score_scale == "100" else 10
        score = {"maximum": top, "minimum": 0, "title": _title(template.score_key), "type": "integer"}
        props = {
            "explanation": text,
            "incorrect_fields": {
                "items": {"$ref": "#/$defs/IncorrectField"},
                "title": "Incorrect Fields",
                "type": "array",
            },
            template.score_key: score,
        }
        return _strict(template.schema_name, props, ["explanation", "incorrect_fields", template.score_key],
                       {"IncorrectField": field_def})  # fmt: skip
    if template.score_scale == "certainty":
        value = {"enum": list(CERTAINTY_LEVELS), "title": "Confidence", "type": "string"}
    else:
        value = {"maximum": 100, "minimum": 0, "title": "Score", "type": "integer"}
    per_field = _strict(template.schema_name, {"explanation": text, template.score_key: value},
                        ["explanation", template.score_key])  # fmt: skip
    ref = {"$ref": f"#/$defs/{template.schema_name}"}
    return _strict(template.schema_name, {k: ref for k in keys}, list(keys), {template.schema_name: per_field})


@dataclass(frozen=True)
class Request:
    """One call as TLM makes it: the messages and the parameters it sets (None: not sent)."""

    template: str  # a template id, or "consistency"
    messages: list[dict[str, str]]
    max_tokens: int = MAX_TOKENS
    temperature: float | None = None
    schema: dict[str, Any] | None = None
    schema_name: str = ""


def reflection_requests(
    messages: Sequence[Mapping[str, str]], fmt: Mapping[str, Any], answer: str, config: Config
) -> list[Request]:
    """The five reflection calls for one output (``SelfReflectionCompletionGenerator``)."""
    answer = answer.strip()  # TLM strips the reply it scores
    keys = answer_keys(answer)
    question = user_request(messages, fmt)
    words = MAX_EXPLANATION_WORDS[config.reasoning]
    out = []
    for t in TEMPLATES:
        text = t.prompt_for(config.reasoning).format(question=question, answer=answer, max_explanation_words=words)
        temperature = 0.0 if t.kind == "argument" else None  # only the argument template sets one
        out.append(Request(t.id, [{"role": "user", "content": text}], MAX_TOKENS, temperature,
                           reply_schema(t, keys), t.schema_name))  # fmt: skip
    return out


def consistency_schema(fmt: Mapping[str, Any]) -> dict[str, Any]:
    """``response_format_utils.add_explanation_field``: the output's schema under ``answer``,
    beside an ``explanation``."""
    try:
        name, schema = fmt["json_schema"]["name"], dict(fmt["json_schema"]["schema"])
    except (KeyError, TypeError):
        raise ConstructConfigError("observed consistency needs the output's JSON schema (response_format)") from None
    defs = schema.pop("$defs", {})
    return {
        "$defs": {**defs, name: schema},
        "properties": {
            "explanation": {"title": "Explanation", "type": "string"},
            "answer": {"$ref": f"#/$defs/{name}"},
        },
        "required": ["explanation", "answer"],
        "title": "ObvConsistencyResponse",
        "type": "object",
        "additionalProperties": False,
    }


def consistency_requests(
    messages: Sequence[Mapping[str, str]], fmt: Mapping[str, Any], config: Config
) -> list[Request]:
    """The observed-consistency samples (``ObservedConsistencyCompletionGenerator``): the user's
    messages again with an explanation asked beside the answer; no temperature of TLM's own."""
    if not config.consistency_samples:
        return []
    schema = consistency_schema(fmt)
    return [
        Request("consistency", [dict(m) for m in messages], MAX_TOKENS, None, schema, "ObvConsistencyResponse")
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
        return next(t.kind for t in TEMPLATES if t.id == self.template)


_FLAGS = re.DOTALL | re.IGNORECASE
_EXPLANATION_PATTERNS = (r"<think>\s*(.*?)\s*</think>\s*<score>\s*(?:.*?)\s*</score>",)
_SCORE_PATTERNS = (
    r"<score>\s*(.*?)\s*</score>",
    r".*<score>\W*(?P<answer>\d+(?:\.\d+)?)\W*</score>",
    r".*\(?(?P<answer>\d+(?:\.\d+)?)\)?",
)
"""``tlm/templates/parsers.py``, ``THINK_SCORE_XML_PARSER`` and ``SCORE_XML_PARSER``."""


def _first_match(patterns: Sequence[str], text: str) -> str | None:
    for pattern in patterns:
        if match := re.search(pattern, text, _FLAGS):
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
        explanation = _first_match(_EXPLANATION_PATTERNS, message)
        raw = _first_match(_SCORE_PATTERNS, message)
        return Reflection(template.id, None if raw is None else score_100(raw), None, explanation)
    obj = _json(message, template.id)
    if template.kind == "incorrect_fields":
        listed = _need(obj, "incorrect_fields", template.id)
        try:
            flagged = {item["field_name"]: item["explanation"] for item in listed}
        except (KeyError, TypeError) as exc:
            raise Unreadable(f"{template.id}: an incorrect field without its name or explanation ({exc!r})") from None
        fields = {
            k: FieldReading(INCORRECT_FIELD_SCORE, _explanation(flagged[k], template.id))
            if k in flagged
            else FieldReading(CORRECT_FIELD_SCORE)
            for k in answer_keys(answer)
        }
        raw = str(_need(obj, template.score_key, template.id))
        return Reflection(template.id, score_100(raw) if template.score_scale == "100" else score_10(raw), fields)
    if not isinstance(obj, dict):
        raise Unreadable(f"{template.id}: the reply is a JSON {type(obj).__name__}, not an object")
    fields = {}
    for name, data in obj.items():
        raw = _need(data, template.score_key, f"{template.id}, field {name!r}")
        try:
            score = certainty(raw) if template.score_scale == "certainty" else score_100(raw)
        except TypeError as exc:
            raise Unreadable(f"{template.id}, field {name!r}: {exc}") from None
        explanation = _explanation(_need(data, "explanation", f"{template.id}, field {name!r}"), template.id)
        fields[name] = FieldReading(score, explanation)
    return Reflection(template.id, harmonic_mean([f.score for f in fields.values()]), fields)


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


def _words(text: str) -> set[str]:
    return set(re.findall(r"\b\w+\b", text))


def _all_keys(value: Any) -> set[str]:
    keys: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            keys.add(k)
            keys |= _all_keys(v)
    elif isinstance(value, list | tuple):
        for v in value:
            keys |= _all_keys(v)
    return keys


def jaccard_similarity(answer: str, comparison: str) -> float:
    """``jaccard_utils.jaccard_similarity`` with ``structured_outputs``: shared words over all
    words, the output's keys taken out of both (keys read as a Python literal; none if that fails)."""
    a, b = _words(answer), _words(comparison)
    try:
        keys = _all_keys(ast.literal_eval(answer))
    except Exception:  # TLM reads no keys from an output it cannot evaluate
        keys = set()
    return float(max(0, len(a & b) - len(keys)) / max(1, len(a | b) - len(keys)))


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


def weights_for(model: str | None, *, perplexity: bool) -> _W:
    """``get_score_weights``: the model's weights; the perplexity weight dropped without one."""
    w = dict(MODEL_WEIGHTS.get(model or "", DEFAULT_WEIGHTS))
    if not perplexity:
        w["perplexity"] = math.nan
    return w


def _field_scores(reflections: Sequence[Reflection]) -> dict[str, FieldScore]:
    """``compute_field_metadata``: per field, the mean of the templates that scored it, rescaled
    from the range the templates could give to [0.001, 0.999]; the explanation of the lowest
    score that has one."""
    scored = [r for r in reflections if r.fields is not None]
    data: dict[str, list[FieldReading]] = {}
    for r in scored:
        for name, reading in (r.fields or {}).items():
            data.setdefault(name, []).append(reading)
    out = {}
    n_incorrect = sum(r.kind == "incorrect_fields" for r in scored)
    for name, readings in data.items():
        with_text = [(x.score, x.explanation) for x in readings if x.explanation]
        explanation = with_text[int(np.argmin([s for s, _ in with_text]))][1] if with_text else None
        avg = float(np.mean([x.score for x in readings]))
        if scored:
            top = (CORRECT_FIELD_SCORE * n_incorrect + 1.0 * (len(scored) - n_incorrect)) / len(scored)
            low = 1 - top
            value = make_score_asymptotic(max(avg - low, 0.0) / (top - low)) if top - low > 0 else avg
        else:
            value = avg
        out[name] = FieldScore(value, explanation)
    return out


def _punctuation(message: str) -> str:
    return " " if any(message.strip(" \n").endswith(p) for p in ".!?;:") else ". "


def _explain(
    trust: float | None,
    reflections: Sequence[Reflection],
    samples: Sequence[str],
    similarities: Sequence[float],
    consistency: float,
    answer: str,
) -> str:
    """``explainability_utils.get_explainability_message``."""
    if trust is None:
        return ""
    if math.isnan(trust) or trust >= EXPLAINABILITY_THRESHOLD:
        return "Did not find a reason to doubt trustworthiness."
    message = ""
    mapped = [r.score for r in reflections if r.score is not None]
    mean_reflection = float(np.mean(mapped)) if mapped else math.nan
    if not math.isnan(mean_reflection) and mean_reflection < SELF_REFLECTION_EXPLAINABILITY_THRESHOLD:
        lowest: Reflection | None = None
        for r in reflections:
            if r.score is not None and (lowest is None or lowest.score is None or r.score < lowest.score):
                lowest = r
        text = lowest.explanation if lowest is not None else None
        if text:
            message += text
            message += _punctuation(message) + "\n"
        else:
            message += "Cannot verify that this response is correct.\n"
    if not math.isnan(consistency) and consistency < CONSISTENCY_EXPLAINABILITY_THRESHOLD:
        worst: int | None = None
        for i, s in enumerate(samples):
            if s != answer and (worst is None or similarities[i] < similarities[worst]):
                worst = i
        if worst is not None:
            message += prompts.CONSISTENCY_EXPLANATION.format(observed_consistency_completion=samples[worst])
            message += _punctuation(message) + "\n"
    if len(message) < 5:
        message = "The prompt/response appear atypical or vague."
    return message.strip()


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
    explanation = _explain(trust, reflections, samples, similarities, consistency, answer)
    shown = {k: (None if math.isnan(v) else v) for k, v in parts.items() if k != "prompt_eval"}
    return Scores(trust, _field_scores(reflections), explanation, shown)


def template(template_id: str) -> Template:
    for t in TEMPLATES:
        if t.id == template_id:
            return t
    raise KeyError(f"unknown CONSTRUCT template {template_id!r}; choose from {list(TEMPLATE_IDS)}")


__all__ = [
    "TEMPLATES",
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
