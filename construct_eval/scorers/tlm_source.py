"""CONSTRUCT's definitions read from its authors' package, ``trustworthy-llm`` 0.0.3 (TLM).

Goh & Mueller (2026) compute CONSTRUCT with the open-source TLM (https://github.com/cleanlab/tlm,
Apache-2.0). Nothing of TLM is restated in this package: its reflection templates (their prompts,
reply schemas, reading patterns and score mappings), its presets, reasoning efforts, score
weights, field scores, thresholds and the helpers that score a reply are taken from TLM's own
modules, here, when CONSTRUCT is first used. What this package adds is the engine around them
(:mod:`construct_eval.scorers.construct_method`): the requests as its client makes them, resumable
audit rows, and one output scored from its own rows.

TLM is imported lazily: it imports litellm (a few seconds), which would fetch its model cost map
from the network unless told to use the copy it ships (``LITELLM_LOCAL_MODEL_COST_MAP``, set here
first), so ``import construct_eval`` stays fast and offline. The names below that are plain
literals are identifiers, not TLM's definitions: the preset and effort names the command line
offers before TLM is imported (``tests/test_construct.py`` holds them equal to TLM's enums), and
this package's short name for each template, as its run files store it.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal

TLM_VERSION = "0.0.3"
PRESETS = ("base", "low", "medium", "high", "best")
"""TLM's ``QualityPreset`` values, for the command line's choices (checked against TLM by a test)."""
REASONING_EFFORTS = ("none", "low", "medium", "high")
"""TLM's ``ReasoningEffort`` values, likewise."""
TEMPLATE_IDS: dict[str, str] = {
    "SelfReflectionSOFieldAccuracyConfig": "field-accuracy",
    "SelfReflectionSOFieldKnowledgeGapConfig": "knowledge-gap",
    "ReflectionArgumentTemplate": "argument",
    "ReflectionSOPerScoreCorrectnessTemplate": "per-field-correctness",
    "ReflectionSOPerScoreCertaintyTemplate": "per-field-certainty",
}
"""This package's name for each of TLM's structured-output reflection templates, in TLM's order
(the ``template`` of a ``construct.jsonl`` row)."""

Kind = Literal["incorrect_fields", "per_field", "argument"]


class TLMUnavailable(ImportError):
    """TLM is not installed, or not the version CONSTRUCT's equivalence was shown for."""


@functools.cache
def tlm() -> SimpleNamespace:
    """TLM's modules that define CONSTRUCT, imported once (quietly: its settings print a note
    about API keys, which a local endpoint does not need)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("trustworthy-llm")
    except PackageNotFoundError:
        raise TLMUnavailable(
            f"CONSTRUCT needs its authors' package: pip install trustworthy-llm=={TLM_VERSION}"
            " (make venv installs it with the lock)"
        ) from None
    if installed != TLM_VERSION:
        raise TLMUnavailable(f"CONSTRUCT is defined by trustworthy-llm {TLM_VERSION}; this environment has {installed}")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        from openai.lib._parsing._completions import type_to_response_format_param
        from tlm.config import defaults, presets, score_weights
        from tlm.config.models import DEFAULT_MODEL
        from tlm.templates import reflection_completion_templates as templates
        from tlm.templates import score_mapping
        from tlm.types import ExtractedResponseField
        from tlm.utils import explainability_utils, math_utils, prompt_utils, response_format_utils
        from tlm.utils.scoring import jaccard_utils

        settings = defaults.get_settings()
    return SimpleNamespace(
        presets=presets, score_weights=score_weights, default_model=DEFAULT_MODEL, templates=templates,
        score_mapping=score_mapping, explainability=explainability_utils, math=math_utils, prompt=prompt_utils,
        response_format=response_format_utils, jaccard=jaccard_utils, settings=settings,
        to_response_format=type_to_response_format_param, fields=ExtractedResponseField,
    )  # fmt: skip


@dataclass(frozen=True)
class Template:
    """One structured-output reflection template as TLM creates it for a reasoning effort."""

    id: str
    tlm_class: str
    kind: Kind
    prompt: str  # TLM's ``prompt_template``: ``{question}``, ``{answer}``, ``{max_explanation_words}``
    temperature: float | None  # what TLM sets on the call (None: not sent)
    score_mapper: Callable[[Any], float]  # TLM's mapping of the reply's rating to [0, 1]
    overall_key: str | None  # the incorrect-fields templates' overall rating key
    field_key: str | None  # the per-field templates' key of each field's rating
    score_patterns: tuple[str, ...] = ()  # the argument template's patterns for its score, in order
    explanation_patterns: tuple[str, ...] = ()
    flags: int = 0
    source: Any = None  # TLM's template class

    @property
    def scale(self) -> Literal["100", "10", "certainty"]:
        """What the template's ratings are: 0-100, 0-10, or certainty words (by TLM's mapping)."""
        name = getattr(self.score_mapper, "__name__", "")
        return "10" if name == "score_10_mapping" else "certainty" if name == "certainty_mapping" else "100"

    @property
    def levels(self) -> tuple[str, ...]:
        """A certainty template's words, most certain first, as its reply schema lists them."""
        model = getattr(self.source, "per_field_score_response_format", None)
        if model is None or self.field_key is None:
            return ()
        prop = model.model_json_schema()["properties"][self.field_key]
        return tuple(prop.get("enum", ()))

    def reply_schema(self, answer: str) -> tuple[dict[str, Any], str] | None:
        """The strict JSON schema and name of this template's reply to ``answer`` as TLM's request
        carries it (its pydantic model through the OpenAI client's conversion); None for the
        argument template, which takes free text."""
        if self.kind == "argument":
            return None
        model = self.source.construct_response_format(answer)
        fmt = tlm().to_response_format(model)["json_schema"]
        return dict(fmt["schema"]), str(fmt["name"])


def _kind(t: Any) -> Kind:
    kind = getattr(t, "so_reflection_score_config_type", None)
    if kind is None:
        return "argument"
    return "incorrect_fields" if kind.name == "INCORRECT_FIELDS" else "per_field"


@functools.cache
def templates(reasoning: str) -> tuple[Template, ...]:
    """TLM's five structured-output reflection templates (``SELF_REFLECTION_TEMPLATES_BY_WORKFLOW``),
    each created for ``reasoning`` as TLM creates it (the per-field ones raise without reasoning)."""
    t = tlm()
    effort = t.presets.ReasoningEffort(reasoning)
    out = []
    for cls in t.templates.SELF_REFLECTION_TEMPLATES_BY_WORKFLOW[t.presets.WorkflowType.STRUCTURED_OUTPUT_SCORING]:
        made = cls.create(effort)
        kind = _kind(made)
        patterns = made.parse_patterns or {}
        score = patterns.get(t.fields.SCORE)
        explanation = patterns.get(t.fields.EXPLANATION)
        out.append(Template(
            id=TEMPLATE_IDS[cls.__name__], tlm_class=cls.__name__, kind=kind, prompt=made.prompt_template,
            temperature=made.temperature, score_mapper=made.score_mapper,
            overall_key=made.so_overall_score_key_name if kind == "incorrect_fields" else None,
            field_key=made.per_field_score_key if kind == "per_field" else None,
            score_patterns=tuple(p for x in score or [] for p in x.regex),
            explanation_patterns=tuple(p for x in explanation or [] for p in x.regex),
            flags=int(score[0].flags) if score else 0, source=cls,
        ))  # fmt: skip
    return tuple(out)


def preset_reasoning(preset: str) -> str:
    """The reasoning effort a preset sets (``DEFAULT_CONFIG_FOR_QUALITY``), else the structured-output
    workflow's default (``BaseConfig.from_input``: high)."""
    p = tlm().presets
    effort = p.DEFAULT_CONFIG_FOR_QUALITY[p.QualityPreset(preset)].get(p.REASONING_EFFORT)
    return str(effort.value) if effort is not None else p.ReasoningEffort.HIGH.value


def consistency_completions(preset: str) -> int:
    """Observed-consistency samples of a preset (``DEFAULT_CONFIG_FOR_QUALITY_AND_WORKFLOW``, the
    default workflow's: the structured-output workflow has none of its own)."""
    p = tlm().presets
    return int(p.DEFAULT_CONFIG_FOR_QUALITY_AND_WORKFLOW[p.QualityPreset(preset)][p.WorkflowType.DEFAULT][
        p.NUM_CONSISTENCY_COMPLETIONS
    ])  # fmt: skip


def max_explanation_words(reasoning: str) -> int:
    p = tlm().presets
    return int(p.REASONING_EFFORT_TO_MAX_EXPLANATION_WORDS[p.ReasoningEffort(reasoning)])


def field_scores() -> tuple[float, float]:
    """(a field not listed as incorrect, a field listed) by the incorrect-fields templates."""
    p = tlm().presets
    return float(p.STRUCTURED_OUTPUT_CORRECT_FIELD_SCORE), float(p.STRUCTURED_OUTPUT_INCORRECT_FIELD_SCORE)


WEIGHT_PARTS = ("consistency", "indicator", "self_reflection", "prompt_eval", "perplexity")


def weights(model: str | None) -> dict[str, float]:
    """The score weights of a judge model (``COMPONENT_SCORE_WEIGHTS`` of the default workflow);
    a model TLM does not list takes its default model's."""
    w = tlm().score_weights
    table: Mapping[str, Mapping[str, float]] = w.COMPONENT_SCORE_WEIGHTS[tlm().presets.WorkflowType.DEFAULT]
    row = table.get(model or "", table[tlm().default_model])
    keys = (w.CONSISTENCY_SCORE_WEIGHT, w.INDICATOR_SCORE_WEIGHT, w.SELF_REFLECTION_SCORE_WEIGHT,
            w.PROMPT_EVAL_SCORE_WEIGHT, w.PERPLEXITY_SCORE_WEIGHT)  # fmt: skip
    return {part: float(row[k]) for part, k in zip(WEIGHT_PARTS, keys, strict=True)}


def max_tokens() -> int:
    return int(tlm().settings.MAX_TOKENS)


def user_request(messages: list[dict[str, str]], response_format: Mapping[str, Any]) -> str:
    """``prompt_utils.format_user_request``: the messages, then the response format's schema."""
    return str(tlm().prompt.format_user_request({"messages": messages, "response_format": dict(response_format)}))


def consistency_format(response_format: Mapping[str, Any]) -> dict[str, Any]:
    """``response_format_utils.add_explanation_field``: the output's schema under ``answer``."""
    import copy

    return dict(tlm().response_format.add_explanation_field(copy.deepcopy(dict(response_format))))


def harmonic_mean(scores: list[float]) -> float:
    return float(tlm().math.harmonic_mean(scores))


def make_score_asymptotic(score: float) -> float:
    return float(tlm().math.make_score_asymptotic(score))


def jaccard_similarity(answer: str, comparison: str) -> float:
    """``jaccard_utils.jaccard_similarity`` for structured outputs (the output's keys discounted)."""
    return float(tlm().jaccard.jaccard_similarity(answer, comparison, structured_outputs=True))


def field_metadata(readings: list[tuple[Kind, Mapping[str, Any]]]) -> dict[str, tuple[float, str | None]]:
    """``per_field_scoring_utils.compute_field_metadata`` over the templates that scored fields:
    each given as its kind and its readings (field name to an object with ``score`` and
    ``explanation``); returns each field's (score, explanation)."""
    from tlm.types.base import SOReflectionScoreConfigType

    tlm()
    kinds = {"incorrect_fields": SOReflectionScoreConfigType.INCORRECT_FIELDS,
             "per_field": SOReflectionScoreConfigType.PER_FIELD}  # fmt: skip
    scoring = [SimpleNamespace(template=SimpleNamespace(so_reflection_score_config_type=kinds[k])) for k, _ in readings]
    from tlm.utils.scoring.per_field_scoring_utils import compute_field_metadata

    made = compute_field_metadata([dict(r) for _, r in readings], scoring or None)
    return {name: (float(m["score"]), m["explanation"]) for name, m in made.items()}


def explanation(
    trust: float | None,
    reflections: list[tuple[float | None, str | None]],
    samples: list[str],
    similarities: list[float],
    consistency: float,
    answer: str,
) -> str:
    """``explainability_utils.get_explainability_message`` for one output: its reflections as
    (mapped score, explanation), its consistency samples and their similarities to ``answer``."""
    import numpy as np
    from tlm.types import ExtractedResponseField as F

    t = tlm()
    made = [
        SimpleNamespace(response_fields={} if s is None else {F.MAPPED_SCORE: s}, explanation=e) for s, e in reflections
    ]
    observed = [SimpleNamespace(response_fields={F.ANSWER: s}) for s in samples]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of no mapped score is NaN, as TLM takes it
        return str(t.explainability.get_explainability_message(
            trust, [made], observed, consistency, np.asarray(similarities, dtype=float), 0, answer
        ))  # fmt: skip
