"""Commands that ask a model about outputs: score (the judge), bias (the judge under several
prompt orders), reflect, verdict, consistency, combine, logprob-scores. Each parses, calls the
library and prints."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from typing import Any

from construct_eval.cli.common import (
    RUN,
    Command,
    Writes,
    client_from,
    index_figures,
    parse_ids,
    print_report,
    stage_options,
    stage_opts,
    stage_run_options,
)
from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT
from construct_eval.judging.judge import Judge, JudgeConfig
from construct_eval.judging.prompts import PromptVariant
from construct_eval.judging.scoring import score
from construct_eval.judging.stage import StageOptions
from construct_eval.kinds import MODE_ALIASES


def _score(args: argparse.Namespace, modes: Sequence[str], variant: str) -> int:
    """Judge the run in ``modes`` under prompt order ``variant`` (the judge options of ``args``)."""
    outcome = score(
        RunDir(args.run, create=False),
        client_from(args),
        _config(args, variant),
        modes,
        limit=args.limit,
        ids=parse_ids(args.ids),
        data_dir=args.data_dir,
        options=StageOptions(**stage_run_options(args)),
        batch_fallback=getattr(args, "batch_fallback", "none") == "live",
    )
    print("\n".join(outcome.lines()))
    return 0


def _config(args: argparse.Namespace, variant: str) -> JudgeConfig:
    """The judge configuration the options of :func:`~construct_eval.cli.common.judge_opts` describe."""
    return JudgeConfig(
        constrained=args.constrained,
        max_tokens=args.max_tokens,
        granularity=args.granularity,
        variant=PromptVariant.parse(variant),
        logprobs=not args.no_logprobs,
        explanation_cap=args.explanation_cap,
    )


def _selection(args: argparse.Namespace) -> dict[str, Any]:
    return {"limit": args.limit, "ids": parse_ids(args.ids), "data_dir": args.data_dir}


def cmd_batch_export(args: argparse.Namespace) -> int:
    from construct_eval.judging.batch import export_batch

    judge = Judge(client_from(args), _config(args, args.variant))
    n = export_batch(RunDir(args.run, create=False), judge, args.mode, args.out, **_selection(args))
    print(f"{n} requests written to {args.out} (run it with vLLM's run-batch or a provider's batch API)")
    return 0


def cmd_batch_import(args: argparse.Namespace) -> int:
    from construct_eval.judging.batch import import_batch

    judge = Judge(client_from(args), _config(args, args.variant))
    report = import_batch(RunDir(args.run, create=False), judge, args.mode, args.results, **_selection(args))
    print("\n".join(report.lines()))
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    return _score(args, args.mode, args.variant)


def cmd_logprob_scores(args: argparse.Namespace) -> int:
    from construct_eval.scorers.token_confidence import logprob_run

    rows = logprob_run(RunDir(args.run, create=False))
    docs = [r for r in rows if r["field"] == DOCUMENT]
    missing = Counter(r["reason"] for r in docs if r["score"] is None)
    print(f"token_logprob scores for {sum(r['score'] is not None for r in docs)} of {len(docs)} parsed outputs")
    for reason, n in missing.items():
        print(f"  no score ({reason}): {n}")
    return 0


def cmd_plausibility(args: argparse.Namespace) -> int:
    from construct_eval.scorers.plausibility import plausibility_run

    scored = plausibility_run(RunDir(args.run, create=False), data_dir=args.data_dir)
    print(f"plausibility checks for {scored} outputs (no labels, no model call)")
    return 0


def cmd_bias(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.reports.lines import bias_lines
    from construct_eval.reports.run_analyses import bias_run, elicitation_run

    run = RunDir(args.run, create=False)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    mode = MODE_ALIASES[args.bias_mode].value
    if args.dry_run or args.base_url:  # score the variants that are missing first (resumable, cached)
        for v in variants:
            _score(args, [mode], v)
        if args.dry_run:  # what scoring the missing variants would cost; no analysis
            return 0
    if args.across == "elicitations":  # the forced rating against the free recipe, one order
        report = elicitation_run(run, mode=mode, variant=variants[0], n_boot=args.n_boot, value=args.value)
    else:
        report = bias_run(
            run, mode=mode, variants=variants, n_boot=args.n_boot, value=args.value, elicitation=args.elicitation
        )
    index_figures(args, run, run.path, report.get("figures", []))
    print("\n".join(bias_lines(report, args.across)))
    return 0


def cmd_consistency(args: argparse.Namespace) -> int:
    from construct_eval.scorers import consistency

    scored, samples = consistency.consistency_run(RunDir(args.run, create=False), data_dir=args.data_dir)
    print(f"consistency scores for {scored} documents from {samples} samples")
    return 0


BUILT_IN_MODEL_SCORERS = (
    "construct_eval.scorers.construct",
    "construct_eval.scorers.reflection",
    "construct_eval.judging.verdict",
)
"""Modules whose model-calling scorers (:func:`construct_eval.judging.stage.model_scorer`) the
command line offers as commands; a scorer an installed distribution declares under the entry-point
group ``construct_eval.scorers``, or one registered by any other module imported before the parser
is built (a test), is offered too."""


def model_scorer_commands() -> list[Command]:
    """One command per registered model-calling scorer: ``--run``, its own options, the stage
    options; it writes the run (the lock, provenance and ``--wait`` follow)."""
    import importlib

    from construct_eval.judging.stage import load_plugin_scorers, model_scorers

    for module in BUILT_IN_MODEL_SCORERS:
        importlib.import_module(module)
    load_plugin_scorers()  # scorers other distributions declare (entry-point group construct_eval.scorers)
    registered = list(model_scorers().items())  # in the order first imported, which tests and plugins vary

    def place(entry: tuple[str, Any]) -> tuple[int, int]:  # the built-ins in their listed order, then the rest
        module = entry[1].__module__
        listed = BUILT_IN_MODEL_SCORERS
        return (listed.index(module) if module in listed else len(listed)), registered.index(entry)

    return [
        Command(
            name, cls.summary or cls.spec.label, cmd_model_scorer, [RUN, cls.add_options, *stage_opts()], Writes.RUN
        )
        for name, cls in sorted(registered, key=place)
    ]


def cmd_model_scorer(args: argparse.Namespace) -> int:
    from construct_eval.judging.stage import model_scorers, run_scorer

    cls = model_scorers()[args.command]
    run = RunDir(args.run, create=False)
    return print_report(run_scorer(run, cls(client_from(args), **cls.options_from(args)), **stage_options(args)))


def cmd_combine(args: argparse.Namespace) -> int:
    from construct_eval.reports.combined import combine_run

    run = RunDir(args.run, create=False)
    done = combine_run(run, args.scorers)
    for c in done:
        print(c.line())
    if not done:
        print("nothing to combine: a level needs at least two scorers")
    return 0
