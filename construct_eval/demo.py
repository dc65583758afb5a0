"""``make demo``: the whole pipeline on the embedded local model, offline, in one command.

1. start the llama.cpp server with a packaged model (or use ``--base-url``/``--model``);
2. build the synthetic dataset;
3. *generate*: the model extracts JSON from each document (JSON mode, token log-probs);
4. make a second source of outputs with controlled errors at a realistic rate;
5. *label* both against the ground truth;
6. *judge* per document and per field (one call per top-level field), and read the
   generator's token log-probs as the baseline score;
7. *evaluate* (AUROC/AUPRC with intervals), *calibrate* (out of fold) and run a small
   *bias* check (the same documents with the output's fields in reverse order);
8. write ``report.md`` with the tables and PNG figures, stop the server, and say how the
   numbers compare with the recorded demo in ``results/demo/``.

Every stage writes an ordinary run folder, so a killed demo resumes where it stopped and
makes only the calls that were missing. ``make demo`` writes into ``runs/demo/``, which git
ignores, so a fresh clone runs every stage (generation included) and its tracked files stay
as they were; the recorded demo is replaced only on purpose, by ``make demo-record``.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from construct_eval.data.datasets import load_dataset
from construct_eval.data.generate import GenerationConfig, generate_run, prepare_run
from construct_eval.data.inject import InjectionConfig, inject_rows
from construct_eval.data.labels import LabelRules
from construct_eval.data.runs import RunDir
from construct_eval.judging.judge import JudgeConfig
from construct_eval.judging.prompts import PromptVariant
from construct_eval.judging.scoring import judge_run
from construct_eval.llm.client import Endpoint, identify, make_client, run_sync
from construct_eval.scorers.token_confidence import score_rows
from construct_eval.serving.models import DEFAULT_MODEL, MODELS, LocalServer, ModelError
from construct_eval.types import display_name

RECORDED = Path("results/demo")
"""The recorded demo a new run is compared with (``make demo-record`` replaces it)."""


def _say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def _judge(run: RunDir, endpoint: Endpoint, modes: list[str], variant: str = "default", cache: bool = True) -> Any:
    # the rating alone (grammar:rating-only): small models put their rating first anyway, and an
    # explanation cap set the rating for them (results/runs/README.md); per-field calls then
    # cost little more than one prompt pass per document thanks to the shared prefix
    config = JudgeConfig(max_tokens=16, explanation_cap=0, variant=PromptVariant.parse(variant))
    return judge_run(run, endpoint, modes, config=config, cache=cache, identify_server=False)


def _figure_links(paths: list[Path], out: Path, prefix: str) -> list[str]:
    keep = [p for p in paths if p.name.startswith(prefix)]
    return [f"![{p.stem}]({p.relative_to(out).as_posix()})" for p in keep]


def run_demo(
    out: Path,
    endpoint: Endpoint | None,
    *,
    model: str,
    n_docs: int,
    n_controlled: int,
    command: str = "make demo",
    cache: bool = True,
) -> Path:
    """Run every stage into ``out`` and return the report's path."""
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.analysis.collect import label_run
    from construct_eval.analysis.reports import bias_run, calibrate_run, evaluate_run
    from construct_eval.analysis.tables import markdown_table

    started = time.perf_counter()
    server: LocalServer | None = None
    timings: dict[str, float] = {}
    try:
        if endpoint is None:
            _say(f"starting the local llama.cpp server with {model} ...")
            server = LocalServer(model).start()
            _ON_TERMINATE.append(server.stop)
            endpoint = server.endpoint()
            _say(f"server ready at {server.base_url} ({server.identity})")
        else:
            endpoint = identify(endpoint)  # the identity the server reports, if any

        t = time.perf_counter()
        dataset = load_dataset("synthetic", n=n_docs, seed=0)
        generated = RunDir(out / "generated")
        _say(f"generating JSON for {n_docs} synthetic documents with {endpoint.model} ...")

        async def gen() -> Any:
            async with make_client(endpoint, identify_server=False, cache=cache) as client:
                return await generate_run(generated, dataset, client, GenerationConfig(max_tokens=600))

        _say("; ".join(run_sync(gen()).lines()))
        timings["generate"] = time.perf_counter() - t

        controlled = RunDir(out / "controlled")
        cdata = load_dataset("synthetic", n=n_controlled, seed=1)
        prepare_run(controlled, cdata)
        if not controlled.file("outputs").exists():
            config = InjectionConfig(doc_error_rate=0.25, seed=0)
            rows = inject_rows(cdata.records, cdata.schema_for, LabelRules.from_dict(cdata.label_rules), config)
            controlled.append("outputs", rows)
            controlled.write_meta("generator", {"kind": "controlled_errors", "config": config.signature()})
        labels = {name: label_run(run) for name, run in (("generated", generated), ("controlled", controlled))}
        for name, s in labels.items():
            _say(
                f"labels {name}: {s['documents_wrong']}/{s['documents']} documents wrong, "
                f"{s['field_error_rate']:.1%} of leaf fields wrong, {s['unparsed']} unparsed"
            )

        t = time.perf_counter()
        _say("judging per document and per field (one call per top-level field) ...")
        for run in (generated, controlled):
            _say(f"{run.path.name}: " + " | ".join(_judge(run, endpoint, ["doc", "field"], cache=cache).lines()[:2]))
        generated.replace_scorers(score_rows(generated.read("outputs")), {"token_logprob"})
        _say("small bias check: the controlled documents again with the output's fields reversed ...")
        _judge(controlled, endpoint, ["doc"], variant="reversed", cache=cache)
        timings["judge"] = time.perf_counter() - t
    except ModelError as exc:
        raise SystemExit(f"demo stopped: {exc}") from None
    finally:
        if server is not None:
            server.stop()
            _ON_TERMINATE.remove(server.stop)
            _say("server stopped")

    _say("evaluating, calibrating, testing for positional bias ...")
    sections: list[str] = []
    for run in (generated, controlled):
        ev = evaluate_run(run, None, n_boot=1000)
        cols = ["level", "score", "n", "prevalence", "auroc", "auroc_low", "auroc_high", "auprc", "unscored"]
        sections += [f"## {run.path.name}: error detection", "", markdown_table(_readable(ev["rows"]), cols)]
        sections += _figure_links(ev["figures"], out, "roc_") + _figure_links(ev["figures"], out, "ratings_")
        cal = calibrate_run(run, None, methods=("isotonic", "platt"))
        if cal["rows"]:
            ccols = ["level", "score", "method", "n", "brier", "ece_width", "ece_mass", "ece_debiased"]
            sections += [
                "",
                f"### {run.path.name}: calibration (out of fold)",
                "",
                markdown_table(_readable(cal["rows"]), ccols),
            ]
        else:
            sections += ["", "_Too few labelled items of both classes to calibrate out of fold._"]
        sections.append("")
    br = bias_run(controlled, mode="doc", variants=["default", "reversed"])
    bcols = ["variant_b", "n", "mean_shift", "shift_low", "shift_high", "wilcoxon_p", "exact_agreement"]
    sections += ["## Positional bias (controlled run, document judge)", "", markdown_table(br["pairs"], bcols)]

    seconds = time.perf_counter() - started
    desc = MODELS[model].description if model in MODELS and server is not None else endpoint.model
    head = [
        "# construct-eval demo",
        "",
        f"Made by `{command}` with `{endpoint.model}` ({desc})",
        f"as generator and judge, in {seconds / 60:.1f} min (generation {timings.get('generate', 0):.0f} s,"
        f" judging {timings.get('judge', 0):.0f} s) on this machine.",
        "",
        f"- `generated/`: the model's own extractions of {n_docs} synthetic documents:"
        f" {labels['generated']['documents_wrong']}/{labels['generated']['documents']} wrong documents.",
        f"- `controlled/`: {n_controlled} documents whose outputs are the ground truth with planted errors in"
        f" {labels['controlled']['documents_wrong']} of them (a realistic error rate).",
        "",
        "Scores: the judge's 1-10 rating per document and per field (the rating alone, forced), the",
        "expected rating its log-probs give, the least trusted field as a document score (least over",
        "fields), and the generator's token log-probs. AUROC is for finding wrong items; 0.5 is chance.",
        "A small local model is a weak judge: read the numbers, not the hopes.",
        "",
    ]
    comparison = compare_with_recorded(out, RECORDED)
    report = out / "report.md"
    report.write_text("\n".join(head + sections + comparison) + "\n")
    _say(f"wrote {report} ({seconds / 60:.1f} min)")
    for line in comparison:
        print(line)
    return report


def _readable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with a ``score`` column in a reader's words (the scorer's display name)."""
    return [{**row, "score": display_name(row["scorer"])} for row in rows]


def _detection(folder: Path) -> dict[tuple[str, str], dict[str, str]]:
    """A demo part's detection rows keyed by (level, the scorer's display name).

    The display name is the scorer's identity as a reader meets it: a recorded demo that wrote
    ``judge-doc`` and one that writes ``judge-doc[sec:r-s-o|fields:original]`` (the same prompt,
    named by a newer grammar) meet on one row, ``judge rating``.
    """
    path = folder / "metrics" / "detection.csv"
    if not path.exists():
        return {}
    with path.open(newline="") as fh:
        return {(r["level"], display_name(r["scorer"])): r for r in csv.DictReader(fh)}


def _num(text: str | None) -> float:
    try:
        return float(text) if text not in (None, "") else math.nan
    except ValueError:
        return math.nan


def compare_with_recorded(out: Path, recorded: Path) -> list[str]:
    """Lines for the report: this demo's AUROC and n per scorer beside the recorded demo's.

    The same model and seed give the same outputs, so the numbers should agree; a
    different model, a changed prompt or another llama.cpp build shows up here first.
    """
    if out.resolve() == recorded.resolve():
        return ["", "_This is the recorded demo (`make demo-record`)._"]
    lines = ["", f"## Compared with the recorded demo (`{recorded}`)", ""]
    found = False
    for part in ("generated", "controlled"):
        now, then = _detection(out / part), _detection(recorded / part)
        if not then:
            continue
        found = True
        lines += [
            f"**{part}**", "",
            "| level | score | n now | n recorded | AUROC now | AUROC recorded | difference |",
            "|---|---|---|---|---|---|---|",
        ]  # fmt: skip
        for key in sorted(set(now) | set(then)):
            a, b = now.get(key, {}), then.get(key, {})
            x, y = _num(a.get("auroc")), _num(b.get("auroc"))
            diff = "" if math.isnan(x) or math.isnan(y) else f"{x - y:+.3f}"
            shown = ["-" if math.isnan(v) else f"{v:.3f}" for v in (x, y)]
            lines.append(
                f"| {key[0]} | {key[1]} | {a.get('n', '-')} | {b.get('n', '-')} | {shown[0]} | {shown[1]} | {diff} |"
            )
        lines.append("")
    if not found:
        lines.append(f"_No recorded demo at `{recorded}` to compare with._")
    return lines


_TERMINATED: list[int] = []
_ON_TERMINATE: list[Callable[[], None]] = []
"""What a terminated demo must still do if its interrupt is lost: stop the server it started."""
TERMINATE_GRACE_S = 20.0
"""How long a terminated demo may take to stop by its own interrupt before it is made to."""


def _exit_on_sigterm() -> None:
    """A terminated demo still stops its server (it runs in its own session and would otherwise
    outlive the demo): SIGTERM is handled as SIGINT, which ``asyncio.run`` turns into a clean
    cancellation of the calls in flight and a ``KeyboardInterrupt`` afterwards, so ``finally``
    runs. An interrupt can still be lost: one that lands inside a weakref callback or a finaliser
    is printed and dropped, and the demo went on waiting for its reply (seen in full test runs).
    So the first SIGTERM also starts a watchdog: if the demo has not ended
    :data:`TERMINATE_GRACE_S` seconds later, it runs what :data:`_ON_TERMINATE` holds and exits
    with 143 at once."""

    def watchdog() -> None:
        time.sleep(TERMINATE_GRACE_S)
        for cleanup in list(_ON_TERMINATE):
            try:
                cleanup()
            except Exception as exc:  # the exit below must happen whatever a cleanup does
                print(f"while stopping: {exc}", file=sys.stderr)
        print("demo stopped (terminated); rerun it to resume where it stopped", file=sys.stderr, flush=True)
        os._exit(143)

    def terminate(*_: Any) -> None:
        if not _TERMINATED:
            threading.Thread(target=watchdog, name="demo-terminate-watchdog", daemon=True).start()
        _TERMINATED.append(signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, terminate)


def main(argv: list[str] | None = None) -> int:
    _exit_on_sigterm()
    parser = argparse.ArgumentParser(description="The whole construct-eval pipeline on the embedded local model.")
    parser.add_argument("--out", default="runs/demo", help="run folders and report (default runs/demo, ignored by git)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="packaged model name or a .gguf path")
    parser.add_argument("--base-url", help="use this OpenAI-compatible endpoint instead of starting a local model")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--n", type=int, default=9, help="synthetic documents to generate from")
    parser.add_argument("--controlled", type=int, default=24, help="documents with controlled errors")
    parser.add_argument("--command", default=None, help="how the report names the command that made it")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    args = parser.parse_args(argv)
    endpoint = Endpoint(args.base_url, args.model, backend=args.backend) if args.base_url else None
    command = args.command or "python -m construct_eval.demo " + " ".join(argv if argv is not None else sys.argv[1:])
    try:
        run_demo(
            Path(args.out),
            endpoint,
            model=args.model,
            n_docs=args.n,
            n_controlled=args.controlled,
            command=command,
            cache=not args.no_cache,
        )
    except KeyboardInterrupt:
        _say("demo stopped; rerun it to resume where it stopped")
        return 143 if _TERMINATED else 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
