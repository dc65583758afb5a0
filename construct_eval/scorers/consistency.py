"""Per-field self-consistency: do extra samples of the generator agree with the output, field by field?

For each document the generator is sampled K more times at a higher temperature
(``construct-eval generate --samples K``). A field of the output is trusted as much as the
share of samples that give the same value under the *label rules* (the same comparison
that decides right and wrong: normalised strings, enums, dates, numbers, null rules, list
items paired by optimal assignment). This works at every depth: a leaf inside an object in
a list is compared with its paired counterpart in each sample.

Scores: per leaf, the agreement share; per top-level field, the mean over its leaves; per
document, both the minimum and the mean over leaves (``consistency:min``,
``consistency:mean``). A sample that did not parse agrees with nothing (it is evidence that
the generator is unsure), and is counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from construct_eval.data.labels import LabelRules, label_output
from construct_eval.data.runs import RunDir, RunError
from construct_eval.fields import DOCUMENT, format_path, parse_path
from construct_eval.scorer_registry import CONSISTENCY
from construct_eval.types import ScorerId

FAMILY = CONSISTENCY.family
_DOC_NAMES = {a: ScorerId(FAMILY, aggregate=a).name for a in ("min", "mean")}
"""The document scores' names: the least and the mean agreement over the leaves."""


def leaf_agreement(
    output: Any,
    samples: Sequence[Any | None],
    *,
    schema: Mapping[str, Any] | None = None,
    rules: LabelRules | None = None,
) -> dict[str, float]:
    """Share of samples agreeing with ``output`` at each of its leaves (``None`` = unparsed sample)."""
    rules = rules or LabelRules()
    base = label_output("output", output, output, schema=schema, rules=rules)
    leaves = [f.truth_path for f in base.fields if f.truth_path is not None]
    agree: dict[str, float] = dict.fromkeys(leaves, 0.0)
    if not samples:
        return {}
    for sample in samples:
        if sample is None:
            continue
        labels = label_output("sample", output, sample, schema=schema, rules=rules)
        wrong_at: dict[str, bool] = {}
        for f in labels.fields:
            if f.truth_path is not None:
                wrong_at[f.truth_path] = wrong_at.get(f.truth_path, False) or f.wrong
        for leaf in leaves:
            agree[leaf] += 0.0 if wrong_at.get(leaf, True) else 1.0
    return {leaf: count / len(samples) for leaf, count in agree.items()}


def score_rows(
    outputs: Sequence[Mapping[str, Any]],
    samples: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    schema_for: Any,
    rules: LabelRules,
    granularities: Sequence[str] = ("top", "leaf"),
) -> list[dict[str, Any]]:
    """Score rows (scorer ``consistency``) for outputs that have samples."""
    rows: list[dict[str, Any]] = []
    for out in outputs:
        if "output" not in out:
            continue
        doc_id = out["id"]
        doc_samples = samples.get(doc_id, [])
        base = {
            "id": doc_id,
            "calls": len(doc_samples),
            "tokens": sum(
                int((s.get("usage") or {}).get("prompt_tokens") or 0)
                + int((s.get("usage") or {}).get("completion_tokens") or 0)
                for s in doc_samples
            ),
            "seconds": round(sum(float(s.get("latency_s") or 0.0) for s in doc_samples), 3),
        }
        if not doc_samples:
            rows += [
                {**base, "scorer": _DOC_NAMES[name], "field": DOCUMENT, "score": None, "reason": "no samples"}
                for name in ("min", "mean")
            ]
            continue
        parsed = [s.get("output") if "output" in s else None for s in doc_samples]
        agreement = leaf_agreement(out["output"], parsed, schema=schema_for(doc_id), rules=rules)
        extra = {"samples": len(parsed), "unparsed_samples": sum(p is None for p in parsed)}
        values = list(agreement.values())
        for name, value in (
            ("min", min(values, default=None)),
            ("mean", sum(values) / len(values) if values else None),
        ):
            rows.append({**base, **extra, "scorer": _DOC_NAMES[name], "field": DOCUMENT, "score": value})
        if "leaf" in granularities:
            rows.extend(
                {"id": doc_id, "scorer": FAMILY, "granularity": "leaf", "field": leaf, "score": v}
                for leaf, v in agreement.items()
            )
        if "top" in granularities:
            by_top: dict[str, list[float]] = defaultdict(list)
            for leaf, v in agreement.items():
                by_top[format_path(parse_path(leaf)[:1])].append(v)
            rows.extend(
                {"id": doc_id, "scorer": FAMILY, "granularity": "top", "field": top, "score": sum(v) / len(v)}
                for top, v in by_top.items()
            )
    return rows


def consistency_run(run: RunDir, *, data_dir: str | None = None) -> tuple[int, int]:
    """Consistency scores for a run from its generator samples (``generate --samples K``);
    writes the ``consistency`` rows and returns (documents scored, samples read)."""
    records = {r["id"]: r for r in run.records(data_dir=data_dir)}
    samples: dict[str, list[dict[str, Any]]] = {}
    for row in run.iter_rows("samples"):
        samples.setdefault(row["id"], []).append(row)
    if not samples:
        raise RunError(f"{run.file('samples')} is empty: run `construct-eval generate --samples K` first")
    rules = LabelRules.from_dict((run.meta().get("dataset") or {}).get("label_rules"))
    default_schema = run.schema()
    rows = score_rows(
        run.outputs(records),
        samples,
        schema_for=lambda doc_id: records.get(doc_id, {}).get("schema") or default_schema,
        rules=rules,
    )
    run.replace_scorers(rows, {FAMILY, *_DOC_NAMES.values()})
    scored = sum(1 for r in rows if r["scorer"] == _DOC_NAMES["min"] and r["score"] is not None)
    return scored, sum(map(len, samples.values()))
