"""Commands that ask a model about outputs: score (the judge), bias (the judge under several
prompt orders), reflect, verdict, consistency, combine, logprob-scores. Each parses, calls the
library and prints."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from construct_eval.cli.common import client_from, index_figures, parse_ids, price_options, print_stage, stage_options
from construct_eval.data.runs import RunDir, RunError
from construct_eval.fields import DOCUMENT
from construct_eval.judging.judge import Judge, JudgeConfig
from construct_eval.judging.prompts import PromptVariant
from construct_eval.judging.scoring import ScoringError, score_run
from construct_eval.llm.budget import Budget, BudgetReached
from construct_eval.llm.client import EndpointError
from construct_eval.types import MODE_ALIASES


def _score(args: argparse.Namespace, modes: Sequence[str], variant: str) -> int:
    """Judge the run in ``modes`` under prompt order ``variant`` (the judge options of ``args``)."""
    run = RunDir(args.run, create=False)
    config = _config(args, variant)
    if args.dry_run:
        return _dry_run(args, run, config, modes)
    if getattr(args, "batch", False):
        code = _batch(args, run, config, modes)
        if code or args.batch_fallback != "live":
            return code
        print("live fallback: the calls the batches left undone")
    budget = None
    if args.max_cost is not None:
        if args.price_in is None or args.price_out is None:
            print("error: --max-cost needs --price-in and --price-out (per million tokens)", file=sys.stderr)
            return 2
        budget = Budget(args.max_cost, args.price_in, args.price_out)

    async def go() -> Any:
        async with client_from(args) as client:
            return await score_run(
                run,
                Judge(client, config),
                modes,
                limit=args.limit,
                ids=parse_ids(args.ids),
                progress=not args.quiet,
                data_dir=args.data_dir,
                budget=budget,
            )

    try:
        summary = asyncio.run(go())
    except BudgetReached as exc:
        print(f"stopped at the spending limit: {exc}", file=sys.stderr)
        return 3
    except (RunError, ScoringError, EndpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"judgments written so far are kept in {run.file('judgments')}; rerun to resume", file=sys.stderr)
        return 2
    print("\n".join(summary.lines()))
    return 0


def _config(args: argparse.Namespace, variant: str) -> JudgeConfig:
    """The judge configuration the options of :func:`add_judge_args` describe."""
    return JudgeConfig(
        constrained=args.constrained,
        max_tokens=args.max_tokens,
        granularity=args.granularity,
        variant=PromptVariant.parse(variant),
        logprobs=not args.no_logprobs,
        explanation_cap=args.explanation_cap,
    )


def _batch_file(args: argparse.Namespace, action: Callable[[RunDir, Judge, dict[str, Any]], list[str]]) -> int:
    """``batch export`` / ``batch import``: the run, its judge and document selection, errors printed."""
    run = RunDir(args.run, create=False)
    judge = Judge(client_from(args), _config(args, args.variant))
    selection = {"limit": args.limit, "ids": parse_ids(args.ids), "data_dir": args.data_dir}
    try:
        lines = action(run, judge, selection)
    except (RunError, ScoringError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


def cmd_batch_export(args: argparse.Namespace) -> int:
    from construct_eval.judging.batch import export_batch

    def export(run: RunDir, judge: Judge, selection: dict[str, Any]) -> list[str]:
        n = export_batch(run, judge, args.mode, args.out, **selection)
        return [f"{n} requests written to {args.out} (run it with vLLM's run-batch or a provider's batch API)"]

    return _batch_file(args, export)


def cmd_batch_import(args: argparse.Namespace) -> int:
    from construct_eval.judging.batch import import_batch

    return _batch_file(args, lambda run, judge, sel: import_batch(run, judge, args.mode, args.results, **sel).lines())


def _batch(args: argparse.Namespace, run: RunDir, config: JudgeConfig, modes: Sequence[str]) -> int:
    """Score through the provider's Batch API (resumes the run's batches if it has any)."""
    import openai

    from construct_eval.judging.batch import JudgeWork
    from construct_eval.llm.batch_api import run_batches

    try:
        work = JudgeWork(
            run, Judge(client_from(args), config), modes, limit=args.limit, ids=parse_ids(args.ids),
            data_dir=args.data_dir,
        )  # fmt: skip
        report = run_batches(run, work, poll_s=args.batch_poll, progress=not args.quiet)
    except (RunError, ScoringError, openai.APIError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"the batches are recorded in {run.file('batches')}; rerun to resume polling them", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 0


def _dry_run(args: argparse.Namespace, run: RunDir, config: JudgeConfig, modes: Sequence[str]) -> int:
    """What ``score`` would do: calls after resume and cache, tokens, and the cost at the prices given."""
    from construct_eval.judging.scoring import estimate_cost, plan_score

    judge = Judge(client_from(args), config)
    try:
        summary, todo, _ = plan_score(
            run, judge, modes, limit=args.limit, ids=parse_ids(args.ids), data_dir=args.data_dir
        )
    except (RunError, ScoringError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    estimate = estimate_cost(judge, todo, **price_options(args))
    print(
        f"dry run: {summary.documents} documents, {summary.tasks_planned} calls planned, "
        f"{summary.tasks_skipped_done} already done"
    )
    print("\n".join(estimate.lines()))
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


def cmd_bias(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.analysis.reports import bias_run, elicitation_run

    run = RunDir(args.run, create=False)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if args.dry_run:  # what scoring the missing variants would cost; no analysis
        return max(_score(args, [MODE_ALIASES[args.bias_mode].value], v) for v in variants)
    if args.base_url:  # score the variants that are missing first (resumable, cached)
        for v in variants:
            code = _score(args, [MODE_ALIASES[args.bias_mode].value], v)
            if code:
                return code
    mode = MODE_ALIASES[args.bias_mode].value
    try:
        if args.across == "elicitations":  # the forced rating against the free recipe, one order
            report = elicitation_run(run, mode=mode, variant=variants[0], n_boot=args.n_boot, value=args.value)
        else:
            report = bias_run(
                run, mode=mode, variants=variants, n_boot=args.n_boot, value=args.value, elicitation=args.elicitation
            )
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    index_figures(args, run, run.path, report.get("figures", []))
    paired = report["paired"]
    what = "ways of asking" if args.across == "elicitations" else "orders"
    print(f"{len(paired.items)} items rated under all {len(paired.variants)} {what} ({paired.dropped} incomplete)")
    for r in report["pairs"]:
        if "mean_shift" in r:
            print(
                f"  {r['variant_b']:40s} shift {r['mean_shift']:+.3f} [{r['shift_low']:+.3f}, {r['shift_high']:+.3f}]"
                f"  wilcoxon p={r['wilcoxon_p']:.3g} (Holm {r['wilcoxon_p_holm']:.3g})"
                f"  agree {r['exact_agreement']:.1%}  within one {r['within_one']:.1%}"
                + (f"  scale {r['use_a']} -> {r['use_b']}" if "use_a" in r else "")
            )
    if "friedman" in report:
        print(f"  Friedman across {report['friedman']['variants']} orders: p={report['friedman']['p']:.3g}")
    if "position" in report:
        e = report["position"]
        print(f"  position effect (first -> last): {e.slope:+.3f} [{e.low:+.3f}, {e.high:+.3f}]")
    for r in report.get("debiasing", []):
        print(f"  {r['score']:40s} AUROC {r.get('auroc', float('nan')):.3f}  calls/item {r['calls_per_item']}")
    return 0


def cmd_consistency(args: argparse.Namespace) -> int:
    from construct_eval.scorers import consistency

    try:
        scored, samples = consistency.consistency_run(RunDir(args.run, create=False), data_dir=args.data_dir)
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"consistency scores for {scored} documents from {samples} samples")
    return 0


def cmd_reflect(args: argparse.Namespace) -> int:
    from construct_eval.scorers import reflection

    run = RunDir(args.run, create=False)
    prompts = tuple(args.prompts.split(",")) if args.prompts else tuple(reflection.PROMPTS)
    return print_stage(
        lambda: reflection.reflect_run(
            run,
            client_from(args),
            prompts=prompts,
            granularity=args.granularity,
            max_tokens=args.max_tokens,
            **stage_options(args),
        )
    )


def cmd_verdict(args: argparse.Namespace) -> int:
    from construct_eval.judging import verdict

    run = RunDir(args.run, create=False)
    return print_stage(
        lambda: verdict.verdict_run(
            run,
            client_from(args),
            modes=args.mode,
            granularity=args.granularity,
            **stage_options(args),
        )
    )


def cmd_combine(args: argparse.Namespace) -> int:
    from construct_eval.analysis.combined import combine_run

    run = RunDir(args.run, create=False)
    try:
        done = combine_run(run, parse_ids(args.scorers))
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for c in done:
        print(c.line())
    if not done:
        print("nothing to combine: a level needs at least two scorers")
    return 0
