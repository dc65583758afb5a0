"""``construct-eval``: command-line entry points, thin over the package's library.

The parser (every command and its options, in one place) and ``main``, which runs a command
through the one error-to-exit mapping (:mod:`.exits`) and records each command that writes to
a run folder in its ``provenance.jsonl``. The commands live in :mod:`.judging`, :mod:`.data`,
:mod:`.analysis`, :mod:`.maintenance` (``cache``, ``repair``) and :mod:`.serving` (``serve``,
``models``), their shared options in
:mod:`.common`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from construct_eval.cli import decide as decide_cli
from construct_eval.cli import maintenance
from construct_eval.cli.analysis import (
    cmd_calibrate,
    cmd_compare,
    cmd_cost,
    cmd_evaluate,
    cmd_figures,
    cmd_paired,
    cmd_paper_comparison,
    cmd_summary,
)
from construct_eval.cli.common import (
    add_dataset_args,
    add_endpoint_args,
    add_judge_args,
    add_spend_args,
    add_wait_arg,
    parse_modes,
    release_run_lock,
    scorer_name,
    scorer_names,
    take_run_lock,
)
from construct_eval.cli.data import (
    cmd_export,
    cmd_generate,
    cmd_import,
    cmd_import_scores,
    cmd_inject,
    cmd_label,
    cmd_subset,
)
from construct_eval.cli.exits import run_command
from construct_eval.cli.judging import (
    add_model_scorer_commands,
    cmd_batch_export,
    cmd_batch_import,
    cmd_bias,
    cmd_combine,
    cmd_consistency,
    cmd_logprob_scores,
    cmd_plausibility,
    cmd_score,
)
from construct_eval.cli.serving import add_serving_commands
from construct_eval.data.inject import ALL_KINDS, NEAR_MISS_DEFAULT_SHARE
from construct_eval.kinds import MODE_ALIASES


def _add_intervals_option(p: argparse.ArgumentParser) -> None:
    """``--intervals`` of the AUROC tables (construct_eval.stats.delong.choose)."""
    p.add_argument(
        "--intervals", default="auto", choices=["auto", "bootstrap", "delong"],
        help="AUROC intervals: the document bootstrap, the clustered DeLong estimator (no resamples), or"
        " auto (default): DeLong for a table of 100,000 items or more with 200 documents and 30 items of each"
        " class, the bootstrap below",
    )  # fmt: skip


def _add_figures_option(p: argparse.ArgumentParser) -> None:
    """``--figures SET`` of the analysis commands (analysis.displays.FIGURE_SETS)."""
    p.add_argument(
        "--figures",
        default="all",
        choices=("none", "main", "all"),
        metavar="SET",
        help="figures (and figures/index.md) to draw: none (tables only), main (the headline curves) or all",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="construct-eval", description="Trust scores for LLM structured outputs.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="judge every output of a run folder (resumable)")
    p.add_argument("--run", required=True, help="run folder with records.jsonl and outputs.jsonl")
    p.add_argument("--mode", type=parse_modes, default=["doc", "field"], help="comma list of doc, fields, fields-joint")
    p.add_argument("--variant", default="default", help="prompt variant id, e.g. reversed, o-r-s, shuffled3")
    add_judge_args(p)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("generate", help="have a generator LLM extract JSON for each document (resumable)")
    p.add_argument("--run", required=True, help="run folder to create or complete")
    add_dataset_args(p)
    p.add_argument("--max-tokens", type=int, default=1536)
    p.add_argument("--no-json-mode", action="store_true", help="do not constrain the reply to the schema")
    p.add_argument("--no-logprobs", action="store_true", help="do not ask for token log-probs")
    p.add_argument(
        "--ids",
        default=None,
        help="only these documents of the dataset as selected (comma list of ids), e.g. the study's documents"
        " that get self-consistency samples",
    )
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
    add_spend_args(p)
    add_endpoint_args(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("label", help="true per-field and per-document error labels (output vs ground truth)")
    p.add_argument("--run", required=True)
    p.add_argument("--data-dir", help="local copy of the benchmark, for runs that refer to documents by id")
    p.add_argument("--rules", help='JSON file overriding label rules, e.g. {"numeric_tolerance": 0.01}')
    p.set_defaults(func=cmd_label)

    p = sub.add_parser("inject", help="controlled-error outputs: ground truth with planted errors")
    p.add_argument("--run", required=True, help="a new run folder")
    add_dataset_args(p)
    p.add_argument("--doc-error-rate", type=float, default=0.2, help="share of documents with errors")
    p.add_argument("--min-errors", type=int, default=1)
    p.add_argument("--max-errors", type=int, default=3)
    p.add_argument("--kinds", default=None, help=f"comma list from {','.join(ALL_KINDS)}")
    p.add_argument("--error-seed", type=int, default=0)
    p.add_argument(
        "--near-miss-share",
        type=float,
        default=None,
        help="near misses on (new runs): each error is a near miss (digit slip or format change inside"
        f" a string, span cut short or extended, neighbouring type) with this probability, e.g."
        f" {NEAR_MISS_DEFAULT_SHARE}; without --kinds every kind is used. Off: the first kinds only",
    )
    p.set_defaults(func=cmd_inject)

    p = sub.add_parser("logprob-scores", help="the token log-prob baseline from the generator's log-probs")
    p.add_argument("--run", required=True)
    p.set_defaults(func=cmd_logprob_scores)

    p = sub.add_parser("plausibility", help="the label-free plausibility checks from documents and outputs (no labels)")
    p.add_argument("--run", required=True)
    p.add_argument("--data-dir")
    p.set_defaults(func=cmd_plausibility)

    p = sub.add_parser("evaluate", help="error-detection tables and figures for every scorer of a run")
    p.add_argument("--run", required=True)
    p.add_argument("--out", help="folder for metrics/ and figures/ (default: the run folder)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples over documents")
    _add_intervals_option(p)
    p.add_argument("--seed", type=int, default=0)
    _add_figures_option(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("calibrate", help="out-of-fold calibration of every scorer: tables and reliability diagrams")
    p.add_argument("--run", required=True)
    p.add_argument("--out", help="folder for metrics/ and figures/ (default: the run folder)")
    p.add_argument(
        "--methods", default="isotonic,platt,beta,histogram", help="from isotonic,platt,beta,histogram,bbq,enir"
    )
    p.add_argument("--seed", type=int, default=0)
    _add_figures_option(p)
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
    p.add_argument(
        "--elicitation",
        default=None,
        help="pair only judgments asked this way (their 'constrained' label: grammar:rating-only, none);"
        " default: the run's first",
    )
    p.add_argument(
        "--across",
        default="orders",
        choices=["orders", "elicitations"],
        help="pair the prompt orders (default), or the ways the rating was asked for (forced, free) under"
        " the first of --variants",
    )
    add_judge_args(p)
    p.set_defaults(func=cmd_bias)

    p = sub.add_parser("consistency", help="per-field self-consistency of the output with K generator samples")
    p.add_argument("--run", required=True)
    p.add_argument("--data-dir")
    p.set_defaults(func=cmd_consistency)

    add_model_scorer_commands(sub)  # construct, reflect, verdict: every model-calling scorer registered

    p = sub.add_parser(
        "combine", help="label-free rank average of scorers, plus an out-of-fold fitted combiner (uses labels, marked)"
    )
    p.add_argument("--run", required=True)
    p.add_argument(
        "--scorers", type=scorer_names, help="comma list of scorer names (default: every scorer at each level)"
    )
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
    p.add_argument("--reference", required=True, type=scorer_name, help="scorer name as in the detection table")
    p.add_argument("--level", default="document", choices=["document", "field"])
    p.add_argument("--scorers", type=scorer_names, help="comma list (default: every other scorer at the level)")
    p.add_argument(
        "--by-output-kind",
        action="store_true",
        help="field level: compare within fields the output left null or empty and within filled ones",
    )
    p.add_argument("--out", help="folder for metrics/ (default: the run folder)")
    p.add_argument("--n-boot", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    _add_intervals_option(p)
    p.set_defaults(func=cmd_paired)

    p = sub.add_parser(
        "paper-comparison",
        help="the paper's four methods side by side: CONSTRUCT against the judge per document, per field, log-probs",
    )
    p.add_argument("--run", required=True)
    p.add_argument("--out", help="folder for metrics/ (default: the run folder)")
    p.add_argument("--n-boot", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_paper_comparison)

    p = sub.add_parser("figures", help="paper figures from recorded runs: PDF, SVG and 300-dpi PNG at a venue's size")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--runs", nargs="+", help="run folders (evaluated: metrics/detection.csv)")
    which.add_argument("--runs-root", help="every evaluated run folder under this folder")
    p.add_argument("--left-out", help="with --runs-root: a file naming runs to leave out, one a line, 'name  # why'")
    p.add_argument("--out", required=True)
    p.add_argument("--venue", default="neurips", choices=["neurips", "icml", "iclr", "acl"])
    p.add_argument("--column", default="full", choices=["full", "half"], help="text width or one column of two")
    p.add_argument("--main-only", action="store_true", help="the main figures only: no appendix figures, no tables")
    p.add_argument(
        "--only", metavar="NAME", help="one figure (e.g. detect_document), written beside what --out holds; no manifest"
    )
    p.add_argument(
        "--scorers", help="comma list of the scorers to draw (internal names or the labels figures show), not every one"
    )
    p.add_argument("--command-line", default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_figures)

    maintenance.add_commands(sub)  # cache, repair

    p = sub.add_parser("batch", help="judge offline: a batch request file out (OpenAI/vLLM format), its results in")
    bsub = p.add_subparsers(dest="batch_command", required=True)
    b = bsub.add_parser("export", help="the judge calls still to make as a batch request file (custom_id = resume key)")
    b.add_argument("--run", required=True)
    b.add_argument("--mode", type=parse_modes, default=["doc", "field"], help="comma list of doc, fields, fields-joint")
    b.add_argument("--variant", default="default", help="prompt order (see score)")
    b.add_argument("--out", required=True, help="the batch request file (JSONL) to write")
    add_judge_args(b)
    b.set_defaults(func=cmd_batch_export)
    b = bsub.add_parser("import", help="judgments from a batch results file (OpenAI's or vLLM run-batch's format)")
    b.add_argument("--run", required=True)
    b.add_argument("--mode", type=parse_modes, default=["doc", "field"], help="as at export")
    b.add_argument("--variant", default="default", help="as at export")
    b.add_argument("--results", required=True, help="the batch results file (JSONL)")
    add_judge_args(b)
    b.set_defaults(func=cmd_batch_import)

    p = sub.add_parser("cost", help="a run's cost ledger: calls, cached calls, tokens and money per source")
    p.add_argument("--run", required=True)
    p.add_argument("--price-in", type=float, default=None, help="price per million input tokens")
    p.add_argument("--price-out", type=float, default=None, help="price per million output tokens")
    p.set_defaults(func=cmd_cost)

    p = sub.add_parser("summary", help="counts of ratings and unscored reasons in a run")
    p.add_argument("--run", required=True)
    p.set_defaults(func=cmd_summary)

    add_serving_commands(sub)
    decide_cli.add_review_cli(sub)
    add_wait_arg(sub)  # on every command that writes to a run
    decide_cli.add_cli(sub)
    return parser


READ_ONLY = {"summary", "export", "compare", "cache", "models", "serve", "figures", "decide"}
"""Commands that write nothing to a run folder (no provenance line)."""


OUT_INSTEAD_OF_RUN = {"evaluate", "calibrate", "paired", "paper-comparison"}
"""Analysis commands that, given ``--out``, write only there and only read the run: their
provenance line (and the one-writer lock) belong to that folder, not to the run's."""


def written_folder(args: argparse.Namespace) -> str | None:
    """The folder a command writes, whose ``provenance.jsonl`` says what made it (None: none)."""
    out = getattr(args, "out", None)
    if args.command == "subset" or (args.command in OUT_INSTEAD_OF_RUN and out):
        return out
    return getattr(args, "run", None)


def main(argv: list[str] | None = None) -> int:
    from construct_eval.provenance import Record

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.invocation = "construct-eval " + " ".join(argv)
    target = written_folder(args)
    if args.command in READ_ONLY or not target or getattr(args, "dry_run", False):
        return run_command(args.func, args)
    options = {k: v for k, v in vars(args).items() if k not in ("invocation", "wait")}  # how, not what
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
