"""``construct-eval``: command-line entry points, thin over the package's library.

The parser is a table: every command, its help and its options, in one place (:func:`commands`;
the option groups commands share are in :mod:`.common`). ``main`` runs a command through the one
error-to-exit mapping (:mod:`.exits`) and records each command that writes to a run folder in its
``provenance.jsonl``. The commands live in :mod:`.judging`, :mod:`.data`, :mod:`.analysis`,
:mod:`.decide`, :mod:`.maintenance` (``cache``, ``repair``) and :mod:`.serving` (``serve``,
``models``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from construct_eval.cli import analysis as an
from construct_eval.cli import data as da
from construct_eval.cli import decide as de
from construct_eval.cli import judging as ju
from construct_eval.cli import maintenance as ma
from construct_eval.cli import serving as se
from construct_eval.cli.common import (
    BENCHMARK_COPY,
    DATA_DIR,
    DATASET_OPTS,
    LOCKED_BY,
    PRICE_OPTS,
    QUIET,
    RUN,
    WAIT,
    Command,
    OneOf,
    Option,
    Writes,
    add_options,
    endpoint_opts,
    judge_opts,
    opt,
    parse_modes,
    release_run_lock,
    scorer_name,
    scorer_names,
    spend_opts,
    take_run_lock,
    written_folder,
)
from construct_eval.cli.exits import run_command
from construct_eval.data.inject import ALL_KINDS, NEAR_MISS_DEFAULT_SHARE
from construct_eval.kinds import MODE_ALIASES
from construct_eval.llm.cache import default_cache_path
from construct_eval.serving.models import DEFAULT_MODEL, MODELS


# fmt: off
def commands() -> list[Command]:
    """Every command in the order ``--help`` lists them (the model-calling scorers' from their registry)."""
    out = opt("--out", help="folder for metrics/ (default: the run folder)")
    out_figures = opt("--out", help="folder for metrics/ and figures/ (default: the run folder)")
    seed = opt("--seed", type=int, default=0)
    intervals = opt("--intervals", default="auto", choices=["auto", "bootstrap", "delong"],
                    help="AUROC intervals: the document bootstrap, the clustered DeLong estimator (no resamples), or"
                    " auto (default): DeLong for a table of 100,000 items or more with 200 documents and 30 items of"
                    " each class, the bootstrap below")
    figure_set = opt("--figures", default="all", choices=("none", "main", "all"), metavar="SET",
                     help="figures (and figures/index.md) to draw: none (tables only), main (the headline curves) or all")
    modes = opt("--mode", type=parse_modes, default=["doc", "field"], help="comma list of doc, fields, fields-joint")

    def boot(n: int) -> Option:
        return opt("--n-boot", type=int, default=n)

    return [
        Command("score", "judge every output of a run folder (resumable)", ju.cmd_score, [
            opt("--run", required=True, help="run folder with records.jsonl and outputs.jsonl"), modes,
            opt("--variant", default="default", help="prompt variant id, e.g. reversed, o-r-s, shuffled3"),
            *judge_opts()], writes=Writes.RUN),
        Command("generate", "have a generator LLM extract JSON for each document (resumable)", da.cmd_generate, [
            opt("--run", required=True, help="run folder to create or complete"), *DATASET_OPTS,
            opt("--max-tokens", type=int, default=1536),
            opt("--no-json-mode", action="store_true", help="do not constrain the reply to the schema"),
            opt("--no-logprobs", action="store_true", help="do not ask for token log-probs"),
            opt("--ids", default=None, help="only these documents of the dataset as selected (comma list of ids),"
                " e.g. the study's documents that get self-consistency samples"),
            opt("--samples", type=int, default=0, help="extra outputs per document (self-consistency)"),
            opt("--sample-temperature", type=float, default=1.0),
            opt("--max-context", type=int, default=None,
                help="the endpoint's context in tokens: prompts that cannot fit with --max-tokens are reported and not"
                " sent (the embedded server's is known; elsewhere tokens are estimated)"),
            opt("--max-document-tokens", type=int, default=None, help="documents longer than this ..."),
            opt("--long-documents", default="skip", choices=["skip", "truncate"],
                help="... are skipped (recorded as not generated) or truncated to it (recorded on the row)"),
            QUIET, *spend_opts(), *endpoint_opts()], writes=Writes.NEW_RUN),
        Command("label", "true per-field and per-document error labels (output vs ground truth)", da.cmd_label, [
            RUN, BENCHMARK_COPY,
            opt("--rules", help='JSON file overriding label rules, e.g. {"numeric_tolerance": 0.01}')], writes=Writes.RUN),
        Command("inject", "controlled-error outputs: ground truth with planted errors", da.cmd_inject, [
            opt("--run", required=True, help="a new run folder"), *DATASET_OPTS,
            opt("--doc-error-rate", type=float, default=0.2, help="share of documents with errors"),
            opt("--min-errors", type=int, default=1), opt("--max-errors", type=int, default=3),
            opt("--kinds", default=None, help=f"comma list from {','.join(ALL_KINDS)}"),
            opt("--error-seed", type=int, default=0),
            opt("--near-miss-share", type=float, default=None,
                help="near misses on (new runs): each error is a near miss (digit slip or format change inside"
                " a string, span cut short or extended, neighbouring type) with this probability, e.g."
                f" {NEAR_MISS_DEFAULT_SHARE}; without --kinds every kind is used. Off: the first kinds only")], writes=Writes.NEW_RUN),
        Command("logprob-scores", "the token log-prob baseline from the generator's log-probs",
                ju.cmd_logprob_scores, [RUN], writes=Writes.RUN),
        Command("plausibility", "the label-free plausibility checks from documents and outputs (no labels)",
                ju.cmd_plausibility, [RUN, DATA_DIR], writes=Writes.RUN),
        Command("evaluate", "error-detection tables and figures for every scorer of a run", an.cmd_evaluate, [
            RUN, out_figures, opt("--n-boot", type=int, default=1000, help="bootstrap resamples over documents"),
            intervals, seed, figure_set], writes=Writes.TABLES),
        Command("calibrate", "out-of-fold calibration of every scorer: tables and reliability diagrams",
                an.cmd_calibrate, [
            RUN, out_figures,
            opt("--methods", default="isotonic,platt,beta,histogram", help="from isotonic,platt,beta,histogram,bbq,enir"),
            seed, figure_set], writes=Writes.TABLES),
        Command("bias", "positional bias: rating shifts across prompt orders, tests, debiased score", ju.cmd_bias, [
            RUN, opt("--variants", required=True, help="comma list, first is the reference: default,reversed,o-s-r"),
            opt("--mode", dest="bias_mode", default="doc", choices=sorted(MODE_ALIASES)), boot(2000),
            opt("--value", default="rating", choices=["rating", "expected_rating"],
                help="test the verbalized rating or its log-prob twin"),
            opt("--elicitation", default=None,
                help="pair only judgments asked this way (their 'constrained' label: grammar:rating-only, none);"
                " default: the run's first"),
            opt("--across", default="orders", choices=["orders", "elicitations"],
                help="pair the prompt orders (default), or the ways the rating was asked for (forced, free) under"
                " the first of --variants"),
            *judge_opts()], writes=Writes.RUN),
        Command("consistency", "per-field self-consistency of the output with K generator samples",
                ju.cmd_consistency, [RUN, DATA_DIR], writes=Writes.RUN),
        *ju.model_scorer_commands(),  # construct, reflect, verdict and any registered
        Command("combine", "label-free rank average of scorers, plus an out-of-fold fitted combiner (uses labels,"
                " marked)", ju.cmd_combine, [
            RUN, opt("--scorers", type=scorer_names,
                     help="comma list of scorer names (default: every scorer at each level)")], writes=Writes.RUN),
        Command("import", "make a run folder from a JSONL of documents and outputs", da.cmd_import, [
            RUN, opt("--items", required=True, help="JSONL: id, request, output, optional schema and ground_truth"),
            opt("--schema", help="a JSON schema file shared by all documents")], writes=Writes.NEW_RUN),
        Command("export", "the documents of a run as JSONL for a scorer that runs elsewhere (e.g. TLM)",
                da.cmd_export, [
            RUN, opt("--out", required=True, help="JSONL: id, request, schema, output, output_hash"),
            opt("--data-dir", help="local copy of the dataset the run refers to")], writes=Writes.NOTHING),
        Command("import-scores", "score rows made elsewhere into the run's scores.jsonl", da.cmd_import_scores, [
            RUN, opt("--scores", required=True, help='JSONL: id, field ("__doc__" for the document), score in [0,1]'),
            opt("--scorer", required=True, help="name of the scorer in tables (replaces its earlier rows)")], writes=Writes.RUN),
        Command("subset", "a new run folder with only some documents of a run (and all made of them)",
                da.cmd_subset, [
            RUN, opt("--out", required=True, help="new run folder"),
            opt("--docs", required=True, help="comma list of document ids"),
            opt("--files", help="comma list of the run's files to copy, e.g. records,outputs,labels (default all)")], writes=Writes.NEW_RUN),
        Command("compare", "judges side by side: seconds per call, unscored rate, ratings, AUROC", an.cmd_compare, [
            opt("runs", nargs="+", help="run folders, one per judge configuration"),
            opt("--out", help="write OUT.csv and OUT.md"), boot(1000)], writes=Writes.NOTHING),
        Command("paired", "each scorer against a reference: paired AUROC differences, Holm-corrected",
                an.cmd_paired, [
            RUN, opt("--reference", required=True, type=scorer_name, help="scorer name as in the detection table"),
            opt("--level", default="document", choices=["document", "field"]),
            opt("--scorers", type=scorer_names, help="comma list (default: every other scorer at the level)"),
            opt("--by-output-kind", action="store_true",
                help="field level: compare within fields the output left null or empty and within filled ones"),
            out, boot(2000), seed, intervals], writes=Writes.TABLES),
        Command("paper-comparison", "the paper's four methods side by side: CONSTRUCT against the judge per"
                " document, per field, log-probs", an.cmd_paper_comparison, [RUN, out, boot(2000), seed], writes=Writes.TABLES),
        Command("figures", "paper figures from recorded runs: PDF, SVG and 300-dpi PNG at a venue's size",
                an.cmd_figures, [
            OneOf((opt("--runs", nargs="+", help="run folders (evaluated: metrics/detection.csv)"),
                   opt("--runs-root", help="every evaluated run folder under this folder")), required=True),
            opt("--left-out", help="with --runs-root: a file naming runs to leave out, one a line, 'name  # why'"),
            opt("--out", required=True),
            opt("--venue", default="neurips", choices=["neurips", "icml", "iclr", "acl"]),
            opt("--column", default="full", choices=["full", "half"], help="text width or one column of two"),
            opt("--main-only", action="store_true", help="the main figures only: no appendix figures, no tables"),
            opt("--only", metavar="NAME",
                help="one figure (e.g. detect_document), written beside what --out holds; no manifest"),
            opt("--scorers",
                help="comma list of the scorers to draw (internal names or the labels figures show), not every one"),
            opt("--command-line", default=None, help=argparse.SUPPRESS)], writes=Writes.NOTHING),
        Command("cache", "where the response cache is, how big; --check its integrity, --clear empties it",
                ma.cmd_cache, [
            opt("--cache", default=None, help=f"cache file (default {default_cache_path()})"),
            OneOf((opt("--clear", action="store_true", help="delete every cached reply"),
                   opt("--check", action="store_true",
                       help="SQLite's integrity check, read-only; exit 1 if the cache is damaged")))], writes=Writes.NOTHING),
        Command("repair", "move a run's unreadable JSONL lines to side files (never deleted); the run then resumes",
                ma.cmd_repair, [RUN, opt("--dry-run", action="store_true", help="only report what would be moved")], writes=Writes.RUN),
        Command("batch", "judge offline: a batch request file out (OpenAI/vLLM format), its results in", None, [], Writes.NOTHING, parts=(
            Command("export", "the judge calls still to make as a batch request file (custom_id = resume key)",
                    ju.cmd_batch_export, [
                RUN, modes, opt("--variant", default="default", help="prompt order (see score)"),
                opt("--out", required=True, help="the batch request file (JSONL) to write"), *judge_opts()], writes=Writes.READS),
            Command("import", "judgments from a batch results file (OpenAI's or vLLM run-batch's format)",
                    ju.cmd_batch_import, [
                RUN, opt("--mode", type=parse_modes, default=["doc", "field"], help="as at export"),
                opt("--variant", default="default", help="as at export"),
                opt("--results", required=True, help="the batch results file (JSONL)"), *judge_opts()], writes=Writes.RUN))),
        Command("cost", "a run's cost ledger: calls, cached calls, tokens and money per source", an.cmd_cost,
                [RUN, *PRICE_OPTS], writes=Writes.TABLES),
        Command("summary", "counts of ratings and unscored reasons in a run", an.cmd_summary, [RUN], writes=Writes.NOTHING),
        Command("serve", "run the embedded llama.cpp server on 127.0.0.1", se.cmd_serve, [
            opt("--model", default=DEFAULT_MODEL, help=f"one of {sorted(MODELS)}, a .gguf path, or hf:repo/file.gguf"),
            opt("--port", type=int, default=8080),
            opt("--n-ctx", type=int, default=4096,
                help="context size in tokens (prompt + reply); see the README for memory per size")], writes=Writes.NOTHING),
        Command("models", "list the packaged models; --assemble NAME builds one", se.cmd_models,
                [opt("--assemble", choices=sorted(MODELS))], writes=Writes.NOTHING),
        Command("review", "apply a saved trust policy to new outputs: accept or review, and a queue", de.cmd_review, [
            opt("--run", required=True, help="a run folder of new outputs (no labels needed)"),
            opt("--policy", required=True, help="a policy file from `decide --save`"),
            opt("--labels", help="labels that came back (JSONL): the realised error among accepted items"),
            opt("--out", help="folder for the decisions, queue and summary (default RUN/review)"),
            opt("--new-fields", default="error", choices=["error", "review"],
                help="a field the policy never saw: stop with an error (default) or send it to review"),
            opt("--n-perm", type=int, default=999, help="permutations of the shift test"), DATA_DIR,
            *endpoint_opts()], writes=Writes.RUN),
        Command("decide", "auto-accept threshold with a risk guarantee (Learn-then-Test) for one scorer",
                de.cmd_decide, [
            opt("--run", required=True, help="a labelled run folder"),
            opt("--scorer", required=True, type=scorer_name,
                help="scorer name as in the detection table, e.g. judge-doc"),
            opt("--alpha", type=de.fraction, default=0.05, help="target risk: share of auto-accepted items wrong"),
            opt("--delta", type=de.fraction, default=0.1, help="the guarantee holds with probability 1 - delta"),
            opt("--level", default=None, choices=["document", "field"], help="default: the scorer's own level"),
            opt("--field-test", default="wsr", choices=["wsr", "hb"],
                help="field level: betting (WSR) or Hoeffding-Bentkus p-value of the per-document loss"),
            opt("--n-boot", type=int, default=1000, help="document-bootstrap resamples for the AURC interval"),
            opt("--out", help="folder for the report's table and figure (default: print only)"),
            opt("--save", help="also save the fitted policy (JSON) here, for `construct-eval review`")], writes=Writes.NOTHING),
    ]
# fmt: on


def add_commands(sub: argparse._SubParsersAction, table: list[Command], dest: str = "command") -> None:
    """One parser per command of ``table`` on ``sub`` (a command with parts gets its own
    subcommands); a command that holds its run's lock takes ``--wait``."""
    for command in table:
        p = sub.add_parser(command.name, help=command.help)
        add_options(p, [*command.options, *([WAIT] if command.writes in LOCKED_BY else [])])
        if command.parts:
            add_commands(p.add_subparsers(dest=f"{command.name}_command", required=True), list(command.parts))
        if command.run is not None:
            p.set_defaults(func=command.run, writes=command.writes)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="construct-eval", description="Trust scores for LLM structured outputs.")
    add_commands(parser.add_subparsers(dest="command", required=True), commands())
    return parser


def main(argv: list[str] | None = None) -> int:
    from construct_eval.provenance import Record

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.invocation = "construct-eval " + " ".join(argv)
    target = written_folder(args)
    if not target or getattr(args, "dry_run", False):
        return run_command(args.func, args)
    options = {k: v for k, v in vars(args).items() if k not in ("invocation", "wait", "writes")}  # how, not what
    refused = take_run_lock(args, Path(target))  # one writer per run: a second one stops here
    if refused is not None:
        return refused
    record = Record(Path(target), argv, args.command, options)
    code = 1
    try:
        code = run_command(args.func, args)
        return code
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
        raise
    finally:
        record.finish(code)
        release_run_lock(args)
