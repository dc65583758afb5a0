"""The positive control: CONSTRUCT's own code, given a judge of known competence, on real outputs.

    .venv/bin/python -m construct_eval.studies.competence RUN [--seeds 5] [--judge-runs RUN ...]

writes ``metrics/construct_competence`` in RUN and ``metrics/construct_parts`` (each template on
its own, :mod:`construct_eval.reports.construct_parts`) in RUN and each judge run.

A CONSTRUCT score that finds no errors could mean a weak judge or a pipeline that loses the
signal. This control tells the two apart without model time. A *scripted judge of competence q*
knows each top-level field's true label and is wrong about it with probability ``1 - q`` (one
belief per field and seed, shared by every template, as one judge's knowledge would be). It
answers each of TLM's five reflection templates in that template's own reply format, consistent
with its beliefs:

- the two incorrect-fields templates list the fields it believes wrong, with a high overall
  confidence (95, or 9 of 10) when it believes none wrong and a low one (10, or 1) otherwise;
- the argument template writes ``<think>...</think>`` then ``<score>95</score>`` or ``10``;
- the per-field templates give every field the most / least certain of TLM's certainty words
  (read from the template's reply schema), or 95 / 5 of 100.

Its replies are read by :func:`construct_eval.scorers.construct.read_reply` and scored by
:func:`construct_eval.scorers.construct.score_rows` (the code that scores the model's replies),
then joined to the labels and measured as every table measures a score
(:mod:`construct_eval.reports.collect`, :func:`construct_eval.stats.metrics.auroc_interval`).
The card's per-field judge is scripted the same way (10 for a field believed right, 2 for one
believed wrong; a document's rating its least field's).

The table ``construct_competence.csv`` (in the run's ``metrics``) has, per competence and level,
the AUROC averaged over seeds with a 95% interval pooling the document bootstrap of every seed,
and the range over seeds; then the same run's CONSTRUCT from the model judge on the same
outputs (and, with ``--judge-runs``, other judges' on the same outputs), and the competence at
which the scripted curve reaches its AUROC, with the competences it reaches at the ends of that
AUROC's interval.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from construct_eval.csv_tables import read_rows
from construct_eval.data.labels.summary import judged_field_errors
from construct_eval.data.runs import RunDir
from construct_eval.digest import sha256_hex
from construct_eval.fields import DOCUMENT
from construct_eval.kinds import Level
from construct_eval.reports.collect import ScoredItems, items_from_rows, load_labels
from construct_eval.reports.construct_parts import write_parts
from construct_eval.reports.tables import write_table
from construct_eval.scorers import construct as cs
from construct_eval.scorers import construct_method as cm
from construct_eval.stats.metrics import auroc, group_index, resampled_metrics
from construct_eval.types import JudgeInput

COMPETENCES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
SEEDS = 5
TABLE = "construct_competence"
SCRIPTED_FIELD_JUDGE = "judge-field"
HIGH, LOW = 95, 10
"""The scripted judge's 0-100 confidence in an output it believes right / wrong."""


@dataclass(frozen=True)
class ScriptedJudge:
    """A judge right about each top-level field with probability ``q`` (``seed`` fixes which)."""

    q: float
    seed: int

    def believes_wrong(self, doc_id: str, truth: Mapping[str, bool]) -> dict[str, bool]:
        """Per field: True where this judge believes it wrong. Drawn from the document's id, the
        competence and the seed, so a belief does not depend on which other documents are judged."""
        key = int(sha256_hex(json.dumps([doc_id, self.q, self.seed]))[:15], 16)
        right = np.random.default_rng(key).random(len(truth)) < self.q
        return {name: bool(w) == bool(r) for (name, w), r in zip(sorted(truth.items()), right, strict=True)}

    def reply(self, template: cm.Template, keys: Sequence[str], wrong: Mapping[str, bool]) -> str:
        """What it writes to ``template`` about an output with top-level ``keys``."""
        flagged = [k for k in keys if wrong.get(k, False)]
        doubt = bool(flagged)
        if template.kind == "argument":
            why = f"The fields {', '.join(flagged)} do not match the document." if doubt else "Every field matches."
            return f"<think>\n{why}\n</think>\n\n<score>\n{LOW if doubt else HIGH}\n</score>"
        if template.kind == "incorrect_fields":
            overall = (LOW if doubt else HIGH) if template.scale == "100" else (1 if doubt else 9)
            return json.dumps({
                "explanation": "Each field checked against the document.",
                "incorrect_fields": [{"field_name": k, "explanation": "It does not match the document."} for k in flagged],
                str(template.overall_key): overall,
            })  # fmt: skip
        if template.scale == "certainty":  # its most and least certain words, as TLM's schema lists them
            value: dict[bool, Any] = {True: template.levels[-1], False: template.levels[0]}
        else:
            value = {True: 100 - HIGH, False: HIGH}
        return json.dumps({
            k: {"explanation": "Checked against the document.", str(template.field_key): value[wrong.get(k, False)]}
            for k in keys
        })  # fmt: skip


def field_truth(item: JudgeInput, labels: Any) -> dict[str, bool] | None:
    """Each top-level field of the output: True where a label at or under it is wrong (None: the
    document has no labels, or a field has none)."""
    doc = labels.get(item.doc_id)
    if doc is None or not isinstance(item.output, dict):
        return None
    judged = judged_field_errors(doc, [str(k) for k in item.output])
    if any(v is None for v in judged.values()):
        return None
    return {k: bool(v) for k, v in judged.items()}


def scripted_calls(
    judge: ScriptedJudge, items: Sequence[JudgeInput], truth: Mapping[str, Mapping[str, bool]], config: cm.Config
) -> list[dict[str, Any]]:
    """The audit rows ``construct`` would have written had ``judge`` answered its calls: each
    scripted reply and its reading by :func:`construct_eval.scorers.construct.read_reply`."""
    calls: list[dict[str, Any]] = []
    for item in items:
        wrong = judge.believes_wrong(item.doc_id, truth[item.doc_id])
        answer = cs.answer_text(item.output)
        keys = cm.answer_keys(answer)
        for req in cs.plan_requests(item, config):
            text = judge.reply(cm.template(req.template), keys, wrong)
            reading = cs.read_reply(req, text, answer)
            calls.append({"id": item.doc_id, "template": req.template, "index": 0, "output_hash": item.output_hash,
                          "preset": config.preset, "reasoning_effort": config.reasoning,
                          "status": "unscored" if "reason" in reading else "ok", **{"reason": None, **reading},
                          "raw_reply": text, "prompt_tokens": 0, "completion_tokens": 0, "latency_s": 0.0})  # fmt: skip
    return calls


def scripted_rows(
    judge: ScriptedJudge, items: Sequence[JudgeInput], truth: Mapping[str, Mapping[str, bool]], config: cm.Config
) -> list[dict[str, Any]]:
    """Score rows of ``construct`` (document and top-level fields), made by the package's
    CONSTRUCT code from the scripted replies, and of the scripted per-field judge."""
    judge_rows: list[dict[str, Any]] = []
    for item in items:
        wrong = judge.believes_wrong(item.doc_id, truth[item.doc_id])
        ratings = {k: 2 if wrong[k] else 10 for k in cm.answer_keys(cs.answer_text(item.output))}
        judge_rows.append({"id": item.doc_id, "scorer": SCRIPTED_FIELD_JUDGE, "field": DOCUMENT,
                           "score": min(ratings.values())})  # fmt: skip
        judge_rows += [{"id": item.doc_id, "scorer": SCRIPTED_FIELD_JUDGE, "field": k, "granularity": "top", "score": v}
                       for k, v in ratings.items()]  # fmt: skip
    calls = scripted_calls(judge, items, truth, config)
    return cs.score_rows(calls, items, config, model=None) + judge_rows


def _draws(items: ScoredItems, n_boot: int, seed: int) -> tuple[float, np.ndarray]:
    y, s, docs = items.arrays()
    return auroc(y, s), resampled_metrics(y, s, group_index(docs), n_boot=n_boot, seed=seed, budgets=())["auroc"]


def _method_items(items: Sequence[ScoredItems]) -> dict[tuple[str, Level], ScoredItems]:
    """The ``construct`` and scripted-judge items by (family, level), top-level fields only."""
    out = {}
    for it in items:
        ours = it.scorer.family in (cs.FAMILY, SCRIPTED_FIELD_JUDGE) and it.scorer.value is None
        if ours and (it.level is Level.DOCUMENT or it.granularity == "top"):
            out[(it.scorer.family, it.level)] = it
    return out


def judged_items(run: RunDir) -> tuple[list[JudgeInput], dict[str, dict[str, bool]]]:
    """The run's labelled outputs that CONSTRUCT was asked about (all of them where it was asked
    about none), with each one's top-level field labels."""
    every, _ = run.judge_inputs()
    asked = {r["id"] for r in run.iter_rows(cs.FILE)}
    labels = load_labels(run)
    items, truth = [], {}
    for item in every:
        if asked and item.doc_id not in asked:
            continue
        t = field_truth(item, labels)
        if t is not None:
            items.append(item)
            truth[item.doc_id] = t
    return items, truth


def competence_curve(
    run: RunDir, *, competences: Sequence[float] = COMPETENCES, seeds: int = SEEDS, n_boot: int = 1000
) -> list[dict[str, Any]]:
    """The table's rows: per scripted method, level and competence, the AUROC over seeds."""
    items, truth = judged_items(run)
    labels = load_labels(run)
    config = cm.Config(run.meta().get("construct", {}).get("preset", "medium"))
    rows: list[dict[str, Any]] = []
    for q in competences:
        per: dict[tuple[str, Level], list[tuple[float, np.ndarray, ScoredItems]]] = {}
        for seed in range(seeds):
            scored = items_from_rows(scripted_rows(ScriptedJudge(q, seed), items, truth, config), labels)
            for key, it in _method_items(scored).items():
                point, draws = _draws(it, n_boot, seed)
                per.setdefault(key, []).append((point, draws, it))
        for (family, level), results in sorted(per.items(), key=lambda kv: (kv[0][1].value, kv[0][0])):
            points = np.array([p for p, _, _ in results])
            pooled = np.concatenate([d[~np.isnan(d)] for _, d, _ in results])
            first = results[0][2]
            y = np.asarray(first.wrong)
            rows.append({
                "judge": f"scripted, competence {q:.1f}", "score": "CONSTRUCT" if family == cs.FAMILY else "per-field judge",
                "level": level.value, "competence": q, "competence_low": "", "competence_high": "", "seeds": seeds,
                "auroc": round(float(points.mean()), 4), "auroc_low": round(float(np.quantile(pooled, 0.025)), 4),
                "auroc_high": round(float(np.quantile(pooled, 0.975)), 4),
                "auroc_seed_min": round(float(points.min()), 4), "auroc_seed_max": round(float(points.max()), 4),
                "n": len(y), "n_wrong": int(y.sum()), "documents": len(set(first.doc_ids)),
                "unscored": first.unscored,
            })  # fmt: skip
    return rows


def where_on_curve(curve: Sequence[Mapping[str, Any]], value: float) -> str:
    """The competence at which a curve (rows of one method and level, by competence) reaches
    ``value``, interpolated; said as a bound where it lies outside the curve."""
    qs = np.array([float(r["competence"]) for r in curve])
    a = np.array([float(r["auroc"]) for r in curve])
    order = np.argsort(qs)
    qs, a = qs[order], a[order]
    if value <= a[0]:
        return f"<= {qs[0]:.2f}"
    if value >= a[-1]:
        return f">= {qs[-1]:.2f}"
    a_mono = np.maximum.accumulate(a)
    return f"{float(np.interp(value, a_mono, qs)):.2f}"


def model_rows(run: RunDir, curve: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The run's own CONSTRUCT (the model judge) as its detection table has it (``evaluate``'s
    ``metrics/detection.csv``: AUROC, interval, counts and why a row is underpowered, so the two
    tables never differ), placed on the curve: the competence where the curve reaches its AUROC,
    and from ``competence_low`` to ``competence_high`` where it reaches the ends of the AUROC's
    95% interval (the judge's uncertainty carried through the curve; the curve's own, over seeds,
    is far smaller and left out; no ends where the table has no interval)."""
    judge = run.model("construct") or "?"
    detection = read_rows(run.path / "metrics" / "detection.csv")
    out = []
    for level, scorer in ((Level.DOCUMENT, cs.FAMILY), (Level.FIELD, f"{cs.FAMILY}@top")):
        row = next((r for r in detection if r["level"] == level.value and r["scorer"] == scorer), None)
        if row is None or not row.get("auroc"):
            continue
        same = [
            r
            for r in curve
            if r["score"] == "CONSTRUCT" and r["judge"].startswith("scripted") and r["level"] == level.value
        ]
        low, high = float(row["auroc_low"]), float(row["auroc_high"])
        interval = low == low and high == high
        out.append({
            "judge": judge, "score": "CONSTRUCT", "level": level.value,
            "competence": where_on_curve(same, float(row["auroc"])),
            "competence_low": where_on_curve(same, low) if interval else "",
            "competence_high": where_on_curve(same, high) if interval else "",
            "seeds": "", "auroc": float(row["auroc"]), "auroc_low": low, "auroc_high": high,
            "auroc_seed_min": "", "auroc_seed_max": "", "n": int(row["n"]), "n_wrong": int(row["positives"]),
            "documents": int(row["documents"]), "unscored": int(row["unscored"] or 0), "underpowered": row["underpowered"],
        })  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path)
    p.add_argument("--seeds", type=int, default=SEEDS)
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--judge-runs", type=Path, nargs="*", default=[],
                   help="run folders holding the same outputs judged by other judges: their CONSTRUCT placed on the curve")  # fmt: skip
    args = p.parse_args(argv)
    run = RunDir(args.run, create=False)
    curve = competence_curve(run, seeds=args.seeds, n_boot=args.n_boot)
    rows = curve + model_rows(run, curve)
    for other in args.judge_runs:
        rows += model_rows(RunDir(other, create=False), curve)
    path = run.path / "metrics" / TABLE
    write_table(rows, path, "CONSTRUCT's code with a scripted judge of known competence (the positive control): the"
                " judge is right about each field with probability q, wrong or right; 'per-field judge' is the card's"
                " per-field judge scripted alike; a model judge's row is its CONSTRUCT as the run's detection table has"
                " it, at the competence where the curve reaches its AUROC, in brackets where it reaches its interval's"
                " ends ('<= 0.50': below the curve's start)")  # fmt: skip
    print(f"wrote {path.with_suffix('.csv')} ({len(rows)} rows)")
    for folder in (run.path, *args.judge_runs):  # each judge's CONSTRUCT, template by template
        print(f"wrote {write_parts(RunDir(folder, create=False), n_boot=args.n_boot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
