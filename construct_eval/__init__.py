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

Stages over a run folder: ``judge_run`` (1-10 ratings), ``construct_run`` (CONSTRUCT),
``label_run``; analyses: ``evaluate_run``, ``calibrate_run``, ``bias_run``, ``paper_figures``;
on plain arrays (a score column, a wrong column, document ids): ``DetectionDisplay.from_predictions``
and ``RatingCalibration.from_predictions``; a trust policy: ``decide``, ``Policy``. The other
stages (``verdict``, ``consistency``, ``reflect``, ``combine``) are CLI commands and functions of
their subpackages; the notebooks' helpers are in ``construct_eval.studies`` (docs/development.md: the layout).
"""

from __future__ import annotations

from construct_eval.lazy import lazy_names

__version__ = "0.1.0"

_PUBLIC = {
    # judging one output, in real time
    "trust": "construct_eval.scorers.construct",
    "score_trustworthiness": "construct_eval.judging.judge",
    "score_document": "construct_eval.judging.judge",
    "score_fields": "construct_eval.judging.judge",
    "JudgeConfig": "construct_eval.judging.judge",
    # endpoints, data and run folders
    "Endpoint": "construct_eval.llm.client",
    "LocalServer": "construct_eval.serving.models",
    "RunDir": "construct_eval.data.runs",
    "load_dataset": "construct_eval.data.datasets",
    "plant_errors": "construct_eval.data.inject",
    "apply_ops": "construct_eval.data.inject",
    "LabelRules": "construct_eval.data.labels",
    # stages over a run folder
    "judge_run": "construct_eval.judging.scoring",
    "construct_run": "construct_eval.scorers.construct",
    "label_run": "construct_eval.reports.collect",
    # analyses: over a run folder, and on plain arrays (no run folder)
    "evaluate_run": "construct_eval.reports.run_analyses",
    "calibrate_run": "construct_eval.reports.run_analyses",
    "bias_run": "construct_eval.reports.run_analyses",
    "DetectionDisplay": "construct_eval.display.displays",
    "RatingCalibration": "construct_eval.display.displays",
    "paper_figures": "construct_eval.paper.figure_set",
    # decisions with a guarantee
    "Policy": "construct_eval.decide.policy",
    "decide": "construct_eval.decide.report",
}
__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)
