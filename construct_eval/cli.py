"""``construct-eval``: command-line entry points, thin over the package's modules."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from construct_eval.data.datasets import Dataset, DatasetError, load_dataset
from construct_eval.data.generate import GenerationConfig, generate_run, prepare_run
from construct_eval.data.inject import ERROR_KINDS, InjectionConfig, inject_rows
from construct_eval.data.labels import LabelRules
from construct_eval.data.runs import RunDir, RunError, iter_jsonl
from construct_eval.fields import DOCUMENT
from construct_eval.judging.judge import MODES, Judge, JudgeConfig
from construct_eval.judging.prompts import PromptVariant
from construct_eval.judging.scoring import ScoringError, score_run
from construct_eval.llm.client import Endpoint, EndpointError, LLMClient, ResponseCache, default_cache_path, make_client
from construct_eval.scorers.token_confidence import score_rows as token_score_rows
from construct_eval.types import MODE_ALIASES, judge_modes


def _modes(text: str) -> list[str]:
    try:
        return [m.value for m in judge_modes(text)]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_endpoint_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base-url",
        default=os.environ.get("CONSTRUCT_EVAL_BASE_URL"),
        help="OpenAI-compatible URL, e.g. http://127.0.0.1:8080/v1",
    )
    p.add_argument("--model", default=os.environ.get("CONSTRUCT_EVAL_MODEL"), help="model name the endpoint knows")
    p.add_argument("--backend", default="auto", choices=["auto", "openai", "llamacpp", "generic"])
    p.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="name of the environment variable holding the key (never pass the key itself)",
    )
    p.add_argument(
        "--endpoint-id",
        default=None,
        help="a name for the endpoint that resume and cache keys use instead of its URL (for a URL that changes:"
        " a tunnel, a new vLLM pod); the embedded server reports its own",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="calls in flight (default: the server's slots where it reports them, 1 on the embedded server, else 4)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per request attempt (default 120; 1800 for llama.cpp, where a slow CPU reply is no failure"
        " and a retry would queue a second generation behind the first)",
    )
    p.add_argument("--max-retries", type=int, default=4)
    p.add_argument("--cache", default=None, help=f"response cache file (default {default_cache_path()})")
    p.add_argument("--no-cache", action="store_true")


def _ids(text: str | None) -> list[str] | None:
    return [i.strip() for i in text.split(",") if i.strip()] if text else None


def _add_judge_args(p: argparse.ArgumentParser) -> None:
    """How the judge is asked and where: shared by ``score`` and ``bias`` (which calls ``cmd_score``)."""
    p.add_argument("--granularity", default="top", choices=["top", "item", "leaf"])
    p.add_argument("--constrained", default="auto", choices=["auto", "none", "grammar", "json"])
    p.add_argument("--max-tokens", type=int, default=512)
    p.add_argument("--no-logprobs", action="store_true", help="do not ask for log-probs")
    p.add_argument(
        "--explanation-cap",
        type=int,
        default=None,
        help="grammar only: at most N explanation characters (recorded as grammar:capN; 0 = the rating alone)",
    )
    p.add_argument("--data-dir", help="local copy of the benchmark, for runs that refer to documents by id")
    p.add_argument("--limit", type=int, default=None, help="judge only the first N documents")
    p.add_argument("--ids", default=None, help="judge only these documents (comma list of ids)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_endpoint_args(p)


def _client(args: argparse.Namespace) -> LLMClient:
    if not args.base_url or not args.model:
        raise SystemExit(
            "error: --base-url and --model are required (or set CONSTRUCT_EVAL_BASE_URL and CONSTRUCT_EVAL_MODEL)"
        )
    endpoint = Endpoint(
        args.base_url,
        args.model,
        backend=args.backend,
        api_key=os.environ.get(args.api_key_env),
        endpoint_id=args.endpoint_id,
    )
    cache: Any = False if args.no_cache else (ResponseCache(args.cache) if args.cache else True)
    return make_client(
        endpoint, concurrency=args.concurrency, timeout_s=args.timeout, max_retries=args.max_retries, cache=cache
    )


def _score(args: argparse.Namespace, modes: Sequence[str], variant: str) -> int:
    """Judge the run in ``modes`` under prompt order ``variant`` (the judge options of ``args``)."""
    run = RunDir(args.run, create=False)
    config = JudgeConfig(
        constrained=args.constrained,
        max_tokens=args.max_tokens,
        granularity=args.granularity,
        variant=PromptVariant.parse(variant),
        logprobs=not args.no_logprobs,
        explanation_cap=args.explanation_cap,
    )

    async def go() -> Any:
        async with _client(args) as client:
            return await score_run(
                run,
                Judge(client, config),
                modes,
                limit=args.limit,
                ids=_ids(args.ids),
                progress=not args.quiet,
                data_dir=args.data_dir,
            )

    try:
        summary = asyncio.run(go())
    except (RunError, ScoringError, EndpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"judgments written so far are kept in {run.file('judgments')}; rerun to resume", file=sys.stderr)
        return 2
    print("\n".join(summary.lines()))
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    return _score(args, args.mode, args.variant)


def _add_dataset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dataset", required=True, help="insurance_claims, pii, financial_ner, synthetic, or a CSV/JSONL file"
    )
    p.add_argument("--data-dir", help="local copy of the benchmark (default: download from Hugging Face)")
    p.add_argument("--schema", help="JSON schema file (for a dataset file)")
    p.add_argument("--input-col", default="text")
    p.add_argument("--truth-col", default="ground_truth")
    p.add_argument("--id-col", default=None)
    p.add_argument("--n", type=int, default=40, help="synthetic: number of documents")
    p.add_argument("--seed", type=int, default=0, help="synthetic content and --sample selection")
    p.add_argument("--limit", type=int, default=None, help="only the first N documents")
    p.add_argument("--sample", type=int, default=None, help="a fixed random sample of N documents (--seed)")


def _dataset(args: argparse.Namespace) -> Dataset:
    try:
        ds = load_dataset(
            args.dataset,
            data_dir=args.data_dir,
            schema=args.schema,
            input_col=args.input_col,
            truth_col=args.truth_col,
            id_col=args.id_col,
            n=args.n,
            seed=args.seed,
        )
        return ds.select(limit=args.limit, sample=args.sample, seed=args.seed)
    except DatasetError as exc:
        raise SystemExit(f"error: {exc}") from None


def cmd_generate(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    run = RunDir(args.run)
    config = GenerationConfig(
        max_tokens=args.max_tokens,
        json_mode=not args.no_json_mode,
        logprobs=not args.no_logprobs,
        samples=args.samples,
        sample_temperature=args.sample_temperature,
    )

    from construct_eval.llm.prompt_size import LongDocumentPolicy, context_budget

    try:
        policy = LongDocumentPolicy(args.max_document_tokens, args.long_documents) if args.max_document_tokens else None
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None

    async def go() -> Any:
        async with _client(args) as client:
            budget = context_budget(client.endpoint, args.max_context)
            if budget is None and policy is not None:
                print("note: document tokens are estimated (one per 4 characters): no tokenizer at this endpoint")
            return await generate_run(
                run, dataset, client, config, progress=not args.quiet, budget=budget, long_documents=policy
            )

    try:
        summary = asyncio.run(go())
    except (RunError, EndpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"outputs written so far are kept in {run.path}; rerun to resume", file=sys.stderr)
        return 2
    print("\n".join(summary.lines()))
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    from construct_eval.analysis.collect import label_run

    run = RunDir(args.run, create=False)
    try:
        extra = json.loads(Path(args.rules).read_text()) if args.rules else {}
        summary = label_run(run, data_dir=args.data_dir, extra_rules=extra)
    except (RunError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{summary['documents']} documents: {summary['documents_wrong']} wrong ({summary['document_error_rate']:.1%}),"
        f" {summary['unparsed']} unparsed; leaf fields wrong {summary['field_error_rate']:.1%}"
        f" ({summary['fields_wrong']}/{summary['fields']}); on non-null truth {summary['nonnull_field_error_rate']:.1%}"
        f" ({summary['nonnull_fields_wrong']}/{summary['nonnull_fields']})"
    )
    other = summary.get("other_reading")
    if other:
        print(
            f"with null-like strings {other['null_like_strings']} read as null: {other['documents_wrong']} wrong"
            f" documents, leaf fields wrong {other['field_error_rate']:.1%} ({other['fields_wrong']}/{other['fields']});"
            f" written to labels_other_reading.jsonl"
        )
    if summary["not_generated"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in summary["not_generated_reasons"].items())
        print(
            f"{summary['not_generated']} more documents were not generated ({reasons}):"
            " left out of every rate (a request that failed is not a wrong output)"
        )
    print(f"labels written to {run.file('labels')} (rules {summary['rules_hash']})")
    return 0


def cmd_inject(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    run = RunDir(args.run)
    config = InjectionConfig(
        doc_error_rate=args.doc_error_rate,
        min_errors=args.min_errors,
        max_errors=args.max_errors,
        kinds=tuple(args.kinds.split(",")) if args.kinds else ERROR_KINDS,
        seed=args.error_seed,
    )
    try:
        prepare_run(run, dataset)
        have = {r["id"] for r in run.iter_rows("outputs")}
        rows = (
            inject_rows(
                [r for r in dataset.records if r.id not in have],
                dataset.schema_for,
                LabelRules.from_dict(dataset.label_rules),
                config,
            )
            if not have
            else []
        )
    except (RunError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if have and len(have) < len(dataset.records):
        print("error: this run already holds some controlled-error outputs; use a new run folder", file=sys.stderr)
        return 2
    run.append("outputs", rows)
    run.write_meta("generator", {"kind": "controlled_errors", "config": config.signature()})
    kinds = Counter(op["kind"] for row in rows for op in row["ops"])
    wrong = sum(bool(row["ops"]) for row in rows)
    print(f"{len(rows)} outputs written, {wrong} with planted errors: {dict(kinds)}")
    return 0


def cmd_logprob_scores(args: argparse.Namespace) -> int:
    run = RunDir(args.run, create=False)
    rows = token_score_rows(run.read("outputs"))
    run.replace_scorers(rows, {"token_logprob"})
    docs = [r for r in rows if r["field"] == DOCUMENT]
    missing = Counter(r["reason"] for r in docs if r["score"] is None)
    print(f"token_logprob scores for {sum(r['score'] is not None for r in docs)} of {len(docs)} parsed outputs")
    for reason, n in missing.items():
        print(f"  no score ({reason}): {n}")
    return 0


def _index_figures(args: argparse.Namespace, run: RunDir, out: Path, written: list[Path]) -> None:
    """figures/index.md: which scorer each figure is about, and the command that made it."""
    from construct_eval.analysis.collect import collect
    from construct_eval.analysis.figure_index import update_index

    if not written:
        return
    scorers = [(i.level, i.scorer) for i in collect(run)]
    command = getattr(args, "invocation", None) or f"construct-eval {args.command} --run {args.run}"
    update_index(out / "figures", written, scorers, data=str(run.path), command=command)


def cmd_evaluate(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.analysis.reports import evaluate_run

    run = RunDir(args.run, create=False)
    try:
        report = evaluate_run(run, Path(args.out) if args.out else None, n_boot=args.n_boot, seed=args.seed)
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for row in report["rows"]:
        ci = f"[{row.get('auroc_low', float('nan')):.3f}, {row.get('auroc_high', float('nan')):.3f}]"
        print(
            f"{row['level']:8s} {row['scorer']:34s} n={row['n']:6d} prev={row['prevalence']:.3f}"
            f" AUROC={row['auroc']:.3f} {ci} unscored={row['unscored']}"
        )
    print(f"{report['unparsed']} outputs did not parse (wrong documents that no scorer saw)")
    out = Path(args.out) if args.out else run.path
    _index_figures(args, run, out, report["figures"])
    print(f"tables: {out / 'metrics'}; figures: {len(report['figures'])} (see figures/index.md)")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.analysis.reports import calibrate_run

    run = RunDir(args.run, create=False)
    methods = tuple(args.methods.split(","))
    try:
        report = calibrate_run(run, Path(args.out) if args.out else None, methods=methods, seed=args.seed)
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for row in report["rows"]:
        if "brier" not in row:  # a constant score, or one with 2-3 values: read per value, not fitted
            print(f"{row['level']:8s} {row['scorer']:34s} {row['method']}")
            continue
        print(
            f"{row['level']:8s} {row['scorer']:34s} {row['method']:16s} brier={row['brier']:.4f}"
            f" ece={row['ece_width']:.4f} ece_mass={row['ece_mass']:.4f} debiased={row['ece_debiased']:.4f}"
        )
    if not report["rows"]:
        print("nothing to calibrate: each scorer needs >= 10 labelled items with both classes")
    _index_figures(args, run, Path(args.out) if getattr(args, "out", None) else run.path, report["figures"])
    return 0


def cmd_bias(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.analysis.reports import bias_run

    run = RunDir(args.run, create=False)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if args.base_url:  # score the variants that are missing first (resumable, cached)
        for v in variants:
            code = _score(args, [MODE_ALIASES[args.bias_mode].value], v)
            if code:
                return code
    try:
        report = bias_run(
            run, mode=MODE_ALIASES[args.bias_mode].value, variants=variants, n_boot=args.n_boot, value=args.value
        )
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _index_figures(args, run, run.path, report.get("figures", []))
    paired = report["paired"]
    print(f"{len(paired.items)} items rated under all {len(paired.variants)} orders ({paired.dropped} incomplete)")
    for r in report["pairs"]:
        if "mean_shift" in r:
            print(
                f"  {r['variant_b']:40s} shift {r['mean_shift']:+.3f} [{r['shift_low']:+.3f}, {r['shift_high']:+.3f}]"
                f"  wilcoxon p={r['wilcoxon_p']:.3g} (Holm {r['wilcoxon_p_holm']:.3g})"
                f"  agree {r['exact_agreement']:.1%}  within one {r['within_one']:.1%}"
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


def _stage_result(report_of: Any) -> int:
    """Run a model-calling stage of the library and print its summary (or its error)."""
    from construct_eval.judging.stage import StageFailed

    try:
        report = report_of()
    except (RunError, ValueError, StageFailed) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for line in report.lines():
        print(line)
    return 0


def cmd_reflect(args: argparse.Namespace) -> int:
    from construct_eval.scorers import reflection

    run = RunDir(args.run, create=False)
    prompts = tuple(args.prompts.split(",")) if args.prompts else tuple(reflection.PROMPTS)
    return _stage_result(
        lambda: reflection.reflect_run(
            run,
            _client(args),
            prompts=prompts,
            granularity=args.granularity,
            max_tokens=args.max_tokens,
            data_dir=args.data_dir,
            ids=_ids(args.ids),
            limit=args.limit,
            progress=not args.quiet,
        )
    )


def cmd_verdict(args: argparse.Namespace) -> int:
    from construct_eval.judging import verdict

    run = RunDir(args.run, create=False)
    return _stage_result(
        lambda: verdict.verdict_run(
            run,
            _client(args),
            modes=args.mode,
            granularity=args.granularity,
            data_dir=args.data_dir,
            ids=_ids(args.ids),
            limit=args.limit,
            progress=not args.quiet,
        )
    )


def cmd_combine(args: argparse.Namespace) -> int:
    from construct_eval.analysis.combined import combine_run

    run = RunDir(args.run, create=False)
    try:
        done = combine_run(run, _ids(args.scorers))
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for c in done:
        print(c.line())
    if not done:
        print("nothing to combine: a level needs at least two scorers")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Make a run folder from a JSONL of {id, request, schema?, output, ground_truth?}."""
    run = RunDir(args.run)
    have = {r["id"] for r in run.iter_rows("records")}
    records, outputs = [], []
    try:
        rows = list(iter_jsonl(Path(args.items)))
    except RunError as exc:
        raise SystemExit(f"error: {exc}") from None
    for number, row in enumerate(rows, start=1):
        doc_id = str(row.get("id", number))
        if "request" not in row or "output" not in row:
            raise SystemExit(f"error: {args.items} (document {doc_id!r}): needs 'request' and 'output'")
        if doc_id in have:
            continue
        have.add(doc_id)
        record = {"id": doc_id, "request": row["request"]}
        for key in ("schema", "ground_truth"):
            if key in row:
                record[key] = row[key]
        records.append(record)
        outputs.append({"id": doc_id, "output": row["output"]})
    if args.schema:
        (run.path / "schema.json").write_text(Path(args.schema).read_text())
    run.append("records", records)
    run.append("outputs", outputs)
    print(f"imported {len(records)} documents into {run.path}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from construct_eval.jsonl import replace_jsonl
    from construct_eval.scorers.external import export_items

    run = RunDir(args.run, create=False)
    try:
        rows, not_parsed = export_items(run, data_dir=args.data_dir)
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    replace_jsonl(out, rows)
    print(f"wrote {len(rows)} documents to {out}; {not_parsed} outputs did not parse and are not exported")
    return 0


def cmd_import_scores(args: argparse.Namespace) -> int:
    from construct_eval.scorers.external import ExternalScoreError, read_external_scores

    run = RunDir(args.run, create=False)
    try:
        rows = read_external_scores(args.scores, run, args.scorer)
    except ExternalScoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    run.replace_scorers(rows, {args.scorer})
    docs = [r for r in rows if r["field"] == DOCUMENT]
    unscored = Counter(r["reason"] for r in rows if r["score"] is None)
    print(
        f"{args.scorer}: {len(rows)} score rows for {len({r['id'] for r in rows})} documents"
        f" ({len(docs)} document scores) into {run.file('scores')}; unscored: {dict(unscored) or 0}"
    )
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    run = RunDir(args.run, create=False)
    rows = run.read("judgments")
    by_mode: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    ratings: Counter[tuple[str, int]] = Counter()
    for r in rows:
        by_mode[(r["mode"], r["status"])] += 1
        if r["status"] != "ok":
            reasons[r["reason"]] += 1
        else:
            ratings[(r["mode"], r["rating"])] += 1
    print(f"{len(rows)} judgments in {run.file('judgments')}")
    for mode in MODES:
        ok, un = by_mode[(mode, "ok")], by_mode[(mode, "unscored")]
        if ok + un:
            hist = " ".join(f"{v}:{ratings[(mode, v)]}" for v in range(1, 11) if ratings[(mode, v)])
            print(f"  {mode:13s} scored {ok:6d}  unscored {un:6d} ({un / (ok + un):.1%})  ratings {hist}")
    for reason, n in reasons.most_common():
        print(f"  unscored {reason}: {n}")
    return 0


def cmd_subset(args: argparse.Namespace) -> int:
    ids = [i.strip() for i in args.docs.split(",") if i.strip()]
    try:
        files = args.files.split(",") if args.files else None
        target = RunDir(args.run, create=False).copy_subset(args.out, ids, files=files)
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(ids)} documents of {args.run} copied to {target.path}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from construct_eval.analysis.reports import judge_overview
    from construct_eval.analysis.tables import markdown_table, write_table

    rows = []
    for path in args.runs:
        try:
            rows += judge_overview(RunDir(path, create=False), n_boot=args.n_boot)
        except (RunError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    columns = [
        "run", "model", "mode", "variant", "constrained", "judgments", "s_per_call", "unscored_rate",
        "top_unscored_reason", "ratings", "modal_rating_share", "auroc_rating", "auroc_rating_low",
        "auroc_rating_high", "auroc_expected", "auroc_expected_low", "auroc_expected_high", "n_rating", "wrong_rating",
    ]  # fmt: skip
    print(markdown_table(rows, columns))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_table(rows, out, md_columns=columns)
        print(f"written: {out.with_suffix('.csv')} and {out.with_suffix('.md')}")
    return 0


def cmd_cache(args: argparse.Namespace) -> int:
    path = Path(args.cache) if args.cache else default_cache_path()
    if not path.exists():
        print(f"no response cache at {path}")
        return 0
    cache = ResponseCache(path)  # opening it also tightens its file modes
    try:
        if args.clear:
            n = cache.clear()
            print(f"cleared {n} cached replies from {path}")
        else:
            size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
            print(f"{path}: {len(cache)} cached replies, {size / 1e6:.1f} MB (owner-only: mode 0600, folder 0700)")
            print("it holds every prompt's reply keyed by a hash of the prompt; clear it with --clear")
    finally:
        cache.close()
    return 0


def cmd_paired(args: argparse.Namespace) -> int:
    from construct_eval.analysis.collect import collect
    from construct_eval.analysis.tables import _slug, markdown_table, paired_table, write_table

    run = RunDir(args.run, create=False)
    try:
        rows = paired_table(
            collect(run),
            args.reference,
            level=args.level,
            scorers=[s.strip() for s in args.scorers.split(",")] if args.scorers else None,
            n_boot=args.n_boot,
            seed=args.seed,
        )
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cols = ["level", "a", "b", "n", "auroc_a", "auroc_b", "difference", "low", "high", "p", "p_holm", "ranking"]
    print(markdown_table(rows, cols))
    out = (Path(args.out) if args.out else run.path) / "metrics" / f"paired_{args.level}_{_slug(args.reference)}"
    title = f"Paired AUROC differences against {args.reference} ({args.level}, {args.n_boot} document resamples)"
    write_table(rows, out, title, md_columns=cols)
    print(f"written: {out.with_suffix('.md')}")
    return 0


def cmd_figures(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.analysis.figures import paper_figures

    command = "construct-eval figures " + " ".join(sys.argv[2:]) if args.command_line is None else args.command_line
    try:
        written = paper_figures(args.runs, args.out, venue=args.venue, column=args.column, command=command)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(written)} files ({len(written) // 3} figures as PDF, SVG and PNG) in {args.out}; see figures.md")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="construct-eval", description="Trust scores for LLM structured outputs.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="judge every output of a run folder (resumable)")
    p.add_argument("--run", required=True, help="run folder with records.jsonl and outputs.jsonl")
    p.add_argument("--mode", type=_modes, default=["doc", "field"], help="comma list of doc, fields, fields-joint")
    p.add_argument("--variant", default="default", help="prompt variant id, e.g. reversed, o-r-s, shuffled3")
    _add_judge_args(p)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("generate", help="have a generator LLM extract JSON for each document (resumable)")
    p.add_argument("--run", required=True, help="run folder to create or complete")
    _add_dataset_args(p)
    p.add_argument("--max-tokens", type=int, default=1536)
    p.add_argument("--no-json-mode", action="store_true", help="do not constrain the reply to the schema")
    p.add_argument("--no-logprobs", action="store_true", help="do not ask for token log-probs")
    p.add_argument("--samples", type=int, default=0, help="extra outputs per document (self-consistency)")
    p.add_argument("--sample-temperature", type=float, default=1.0)
    p.add_argument(
        "--max-context",
        type=int,
        default=None,
        help="the endpoint's context in tokens: prompts that cannot fit with --max-tokens are reported and not"
        " sent (the embedded server's is known; elsewhere tokens are estimated)",
    )
    p.add_argument("--max-document-tokens", type=int, default=None, help="documents longer than this ...")
    p.add_argument(
        "--long-documents",
        default="skip",
        choices=["skip", "truncate"],
        help="... are skipped (recorded as not generated) or truncated to it (recorded on the row)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_endpoint_args(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("label", help="true per-field and per-document error labels (output vs ground truth)")
    p.add_argument("--run", required=True)
    p.add_argument("--data-dir", help="local copy of the benchmark, for runs that refer to documents by id")
    p.add_argument("--rules", help='JSON file overriding label rules, e.g. {"numeric_tolerance": 0.01}')
    p.set_defaults(func=cmd_label)

    p = sub.add_parser("inject", help="controlled-error outputs: ground truth with planted errors")
    p.add_argument("--run", required=True, help="a new run folder")
    _add_dataset_args(p)
    p.add_argument("--doc-error-rate", type=float, default=0.2, help="share of documents with errors")
    p.add_argument("--min-errors", type=int, default=1)
    p.add_argument("--max-errors", type=int, default=3)
    p.add_argument("--kinds", default=None, help=f"comma list from {','.join(ERROR_KINDS)}")
    p.add_argument("--error-seed", type=int, default=0)
    p.set_defaults(func=cmd_inject)

    p = sub.add_parser("logprob-scores", help="the token log-prob baseline from the generator's log-probs")
    p.add_argument("--run", required=True)
    p.set_defaults(func=cmd_logprob_scores)

    p = sub.add_parser("evaluate", help="error-detection tables and figures for every scorer of a run")
    p.add_argument("--run", required=True)
    p.add_argument("--out", help="folder for metrics/ and figures/ (default: the run folder)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples over documents")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("calibrate", help="out-of-fold calibration of every scorer: tables and reliability diagrams")
    p.add_argument("--run", required=True)
    p.add_argument("--out", help="folder for metrics/ and figures/ (default: the run folder)")
    p.add_argument(
        "--methods", default="isotonic,platt,beta,histogram", help="from isotonic,platt,beta,histogram,bbq,enir"
    )
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("bias", help="positional bias: rating shifts across prompt orders, tests, debiased score")
    p.add_argument("--run", required=True)
    p.add_argument("--variants", required=True, help="comma list, first is the reference: default,reversed,o-s-r")
    p.add_argument("--mode", dest="bias_mode", default="doc", choices=sorted(MODE_ALIASES))
    p.add_argument("--n-boot", type=int, default=2000)
    p.add_argument(
        "--value",
        default="rating",
        choices=["rating", "expected_rating"],
        help="test the verbalized rating or its log-prob twin",
    )
    _add_judge_args(p)
    p.set_defaults(func=cmd_bias)

    p = sub.add_parser("consistency", help="per-field self-consistency of the output with K generator samples")
    p.add_argument("--run", required=True)
    p.add_argument("--data-dir")
    p.set_defaults(func=cmd_consistency)

    p = sub.add_parser("reflect", help="the reflection ensemble (CONSTRUCT-style judge prompts), resumable")
    p.add_argument("--run", required=True)
    p.add_argument("--prompts", help="comma list; default all: reflect-incorrect,reflect-certainty,...")
    p.add_argument("--granularity", default="top", choices=["top", "item", "leaf"])
    p.add_argument("--max-tokens", type=int, default=1024)
    p.add_argument("--data-dir")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--ids", default=None, help="only these documents (comma list of ids)")
    p.add_argument("--quiet", action="store_true")
    _add_endpoint_args(p)
    p.set_defaults(func=cmd_reflect)

    p = sub.add_parser(
        "verdict", help="P(correct): a yes/no verdict per document and field from the answer's log-probs"
    )
    p.add_argument("--run", required=True)
    p.add_argument("--mode", type=_modes, default=["doc", "field"], help="comma list of doc, fields")
    p.add_argument("--granularity", default="top", choices=["top", "item", "leaf"])
    p.add_argument("--data-dir")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--ids", default=None, help="only these documents (comma list of ids)")
    p.add_argument("--quiet", action="store_true")
    _add_endpoint_args(p)
    p.set_defaults(func=cmd_verdict)

    p = sub.add_parser(
        "combine", help="label-free rank average of scorers, plus an out-of-fold fitted combiner (uses labels, marked)"
    )
    p.add_argument("--run", required=True)
    p.add_argument("--scorers", help="comma list of scorer names (default: every scorer at each level)")
    p.set_defaults(func=cmd_combine)

    p = sub.add_parser("import", help="make a run folder from a JSONL of documents and outputs")
    p.add_argument("--run", required=True)
    p.add_argument("--items", required=True, help="JSONL: id, request, output, optional schema and ground_truth")
    p.add_argument("--schema", help="a JSON schema file shared by all documents")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("export", help="the documents of a run as JSONL for a scorer that runs elsewhere (e.g. TLM)")
    p.add_argument("--run", required=True)
    p.add_argument("--out", required=True, help="JSONL: id, request, schema, output, output_hash")
    p.add_argument("--data-dir", help="local copy of the dataset the run refers to")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import-scores", help="score rows made elsewhere into the run's scores.jsonl")
    p.add_argument("--run", required=True)
    p.add_argument("--scores", required=True, help='JSONL: id, field ("__doc__" for the document), score in [0,1]')
    p.add_argument("--scorer", required=True, help="name of the scorer in tables (replaces its earlier rows)")
    p.set_defaults(func=cmd_import_scores)

    p = sub.add_parser("subset", help="a new run folder with only some documents of a run (and all made of them)")
    p.add_argument("--run", required=True)
    p.add_argument("--out", required=True, help="new run folder")
    p.add_argument("--docs", required=True, help="comma list of document ids")
    p.add_argument("--files", help="comma list of the run's files to copy, e.g. records,outputs,labels (default all)")
    p.set_defaults(func=cmd_subset)

    p = sub.add_parser("compare", help="judges side by side: seconds per call, unscored rate, ratings, AUROC")
    p.add_argument("runs", nargs="+", help="run folders, one per judge configuration")
    p.add_argument("--out", help="write OUT.csv and OUT.md")
    p.add_argument("--n-boot", type=int, default=1000)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("paired", help="each scorer against a reference: paired AUROC differences, Holm-corrected")
    p.add_argument("--run", required=True)
    p.add_argument("--reference", required=True, help="scorer name as in the detection table")
    p.add_argument("--level", default="document", choices=["document", "field"])
    p.add_argument("--scorers", help="comma list (default: every other scorer at the level)")
    p.add_argument("--out", help="folder for metrics/ (default: the run folder)")
    p.add_argument("--n-boot", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_paired)

    p = sub.add_parser("figures", help="paper figures from recorded runs: PDF, SVG and 300-dpi PNG at a venue's size")
    p.add_argument("--runs", nargs="+", required=True, help="run folders (evaluated: metrics/detection.csv)")
    p.add_argument("--out", required=True)
    p.add_argument("--venue", default="neurips", choices=["neurips", "icml", "iclr", "acl"])
    p.add_argument("--column", default="full", choices=["full", "half"], help="text width or one column of two")
    p.add_argument("--command-line", default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_figures)

    p = sub.add_parser("cache", help="where the response cache is, how big; --clear empties it")
    p.add_argument("--cache", default=None, help=f"cache file (default {default_cache_path()})")
    p.add_argument("--clear", action="store_true", help="delete every cached reply")
    p.set_defaults(func=cmd_cache)

    p = sub.add_parser("summary", help="counts of ratings and unscored reasons in a run")
    p.add_argument("--run", required=True)
    p.set_defaults(func=cmd_summary)

    from construct_eval.serving import models as local_llm

    local_llm.add_cli(sub)
    return parser


READ_ONLY = {"summary", "export", "compare", "cache", "models", "serve", "figures"}
"""Commands that write nothing to a run folder (no provenance line)."""


def main(argv: list[str] | None = None) -> int:
    from construct_eval.provenance import Record

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.invocation = "construct-eval " + " ".join(argv)
    target = getattr(args, "out", None) if args.command == "subset" else getattr(args, "run", None)
    if args.command in READ_ONLY or not target:
        return int(args.func(args) or 0)
    options = {k: v for k, v in vars(args).items() if k != "invocation"}
    record = Record(Path(target), argv, args.command, options)
    code = 1
    try:
        code = int(args.func(args) or 0)
        return code
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
        raise
    finally:
        record.finish(code)


if __name__ == "__main__":
    sys.exit(main())
