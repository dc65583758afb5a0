"""construct-eval: how far can an LLM judge be trusted when it rates structured outputs?

What a notebook or script needs, from one place (loaded on first use, so ``import
construct_eval`` stays light)::

    from construct_eval import trust, score_trustworthiness
    result = trust(text, schema, output, endpoint=Endpoint(base_url, model))  # CONSTRUCT, the paper's method
    result.score, result.fields, result.explanation                            # in [0, 1], as TLM computes them
    doc_rating, field_ratings = score_trustworthiness(text, schema, output,   # the card's 1-10 judge
                                                      base_url=base_url, model=model)

    from construct_eval import Endpoint, RunDir, judge_run, label_run, evaluate_run
    run = RunDir("runs/claims")
    judge_run(run, Endpoint("http://127.0.0.1:8080/v1", "qwen2.5-coder-1.5b"), "doc,fields")
    label_run(run); report = evaluate_run(run)

Stages over a run folder: ``judge_run`` (1-10 ratings), ``verdict_run`` (P(correct)),
``construct_run`` (CONSTRUCT), ``reflect_run``, ``consistency_run``, ``combine_run``; analyses: ``label_run``,
``evaluate_run``, ``calibrate_run``, ``bias_run``, ``paper_figures``. On plain arrays (a score
column, a wrong column, document ids): ``DetectionDisplay.from_predictions`` and
``RatingCalibration.from_predictions``. The subpackages hold the rest (README "Layout").
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    # judging one document, or a run
    "score_trustworthiness": "construct_eval.judging.judge",
    "score_document": "construct_eval.judging.judge",
    "score_fields": "construct_eval.judging.judge",
    "Judge": "construct_eval.judging.judge",
    "JudgeConfig": "construct_eval.judging.judge",
    "Judgment": "construct_eval.judging.judge",
    "JudgeInput": "construct_eval.types",
    "ScorerId": "construct_eval.types",
    "judge_run": "construct_eval.judging.scoring",
    "score_run": "construct_eval.judging.scoring",
    "verdict_run": "construct_eval.judging.verdict",
    # endpoints
    "Endpoint": "construct_eval.llm.client",
    "LLMClient": "construct_eval.llm.client",
    "make_client": "construct_eval.llm.client",
    # data and run folders
    "RunDir": "construct_eval.data.runs",
    "load_dataset": "construct_eval.data.datasets",
    # scorers beyond one rating
    "trust": "construct_eval.scorers.construct",
    "construct_run": "construct_eval.scorers.construct",
    "reflect_run": "construct_eval.scorers.reflection",
    "consistency_run": "construct_eval.scorers.consistency",
    "combine_run": "construct_eval.reports.combined",
    # analyses on plain arrays (no run folder)
    "DetectionDisplay": "construct_eval.display.displays",
    "RatingCalibration": "construct_eval.display.displays",
    # analyses
    "label_run": "construct_eval.reports.collect",
    "evaluate_run": "construct_eval.reports.run_analyses",
    "calibrate_run": "construct_eval.reports.run_analyses",
    "base_rate_run": "construct_eval.reports.run_analyses",
    "bias_run": "construct_eval.reports.run_analyses",
    "paper_figures": "construct_eval.paper.figure_set",
    "paper_set": "construct_eval.paper.figure_set",
    "read_left_out": "construct_eval.paper.figure_set",
    "elicitation_run": "construct_eval.reports.run_analyses",
    "describe_values": "construct_eval.stats.calibration",
    "calibrator_words": "construct_eval.stats.calibrators",
    "find_runs": "construct_eval.reports.collect",
    "markdown_table": "construct_eval.reports.tables",
    "RatingUse": "construct_eval.reports.tables",
    # numbers in prose, read from named cells of the stored tables; names a reader sees
    "Ledger": "construct_eval.reports.cells",
    "Cell": "construct_eval.reports.cells",
    "display_name": "construct_eval.scorer_labels",
    "variant_label": "construct_eval.scorer_labels",
    "elicitation_label": "construct_eval.scorer_labels",
    "dataset_label": "construct_eval.display.style",
    "order_label": "construct_eval.display.style",
    "with_members": "construct_eval.paper.paper_plots",  # a combination named by its members
    # planting errors and labelling
    "plant_errors": "construct_eval.data.inject",
    "apply_ops": "construct_eval.data.inject",
    "LabelRules": "construct_eval.data.labels",
    # decisions with a guarantee
    "decide": "construct_eval.decide.report",
    "Policy": "construct_eval.decide.policy",
    "labelled_items": "construct_eval.decide.policy",
    "only_documents": "construct_eval.decide.policy",
    "run_outputs": "construct_eval.decide.policy",
    "read_table": "construct_eval.decide.stored",
    "findings_markdown": "construct_eval.decide.findings",
    # the embedded model
    "LocalServer": "construct_eval.serving.models",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    where = _PUBLIC.get(name)
    if where is None:
        raise AttributeError(f"module 'construct_eval' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
