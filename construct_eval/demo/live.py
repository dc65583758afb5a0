"""The demo's live part: a few synthetic documents extracted, labelled and judged now, on the
embedded model, and CONSTRUCT's trust score for one output.

Stages (each timed, with the machine's load beside it):

1. start the llama.cpp server with a packaged model (or use ``--base-url``/``--model``);
2. *generate*: the model extracts JSON from :data:`N_DOCS` synthetic documents;
3. *label* the outputs against the ground truth;
4. *judge* each output per document and per top-level field with the card's prompt, the reply
   forced to ``Rating: [[x]]`` (the rating alone, so a call costs one prompt pass and a few
   tokens), and the expected rating its log-probs give;
5. *CONSTRUCT*: :func:`construct_eval.trust` on one output (TLM's ``medium`` preset, 5 calls).

Every stage writes an ordinary run folder (``live/``) or a file in it, so a killed demo resumes
where it stopped. With :data:`N_DOCS` documents no score can be measured (a few dozen fields); the
recorded part of the report (:mod:`construct_eval.demo.recorded`) answers that from the recorded
study.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT, parse_path
from construct_eval.parsing import Unscored
from construct_eval.types import JudgeInput

LIVE = "live"
"""The live part's run folder under the demo's output folder."""
TRUST_FILE = "trust.json"
"""CONSTRUCT's result for the one output it scores, kept in the live run folder (a rerun reuses it)."""

DEMO_MODEL = "qwen2.5-coder-0.5b"
"""The model the default demo generates and judges with (see :data:`N_DOCS` for why)."""
N_DOCS = 3
"""Synthetic documents the default demo generates and judges (an invoice, an insurance claim and a
shipping notice), chosen with :data:`DEMO_MODEL` from measured seconds per call so that ``make
demo`` stays under 10 minutes on 2 idle cores; the demo prints its own stage times, so the choice
can be checked on any machine.

The two candidates, measured with the demo's own calls on this project's 2-core machine while it
was shared with other work (1-minute load 7 to 12, so several times slower than idle): Qwen 0.5B
took 272 s a document to extract and CONSTRUCT's 5 calls 720 to 907 s; SmolLM2-135M 189 s and
1,040 s. SmolLM2 parsed 2 of 4 outputs and CONSTRUCT could not score its output (a per-field reply
cut at TLM's 512 tokens); Qwen 0.5B parsed 3 of 3 and was scored. So the 0.5B model. Its recorded
demo (``results/demo/``, load 4 to 7) made 38 calls: 14,572 prompt tokens and 1,761 generated
ones. At the rates this server reaches on 2 idle cores (about 100 prompt tokens and 20 generated
tokens a second: ``results/benchmarks/local_server.txt``) that is about 4 minutes of model time;
at the best rates seen under load (69 and 17) about 5.5. About 45 s a further document."""
TRUST_PRESET = "medium"


def documents(n: int) -> str:
    return f"{n} synthetic document{'' if n == 1 else 's'}"


def load_average() -> tuple[float, float, float]:
    """The machine's 1, 5 and 15-minute load averages (zeros where the OS gives none)."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return 0.0, 0.0, 0.0
    return round(one, 2), round(five, 2), round(fifteen, 2)


@dataclass
class Stage:
    """One timed stage: its name, whether it calls the model, its wall time, the calls it made
    (0 for a resumed stage that found them done), and the 1-minute load average when it ended."""

    name: str
    live: bool
    seconds: float
    calls: int
    load: float

    def line(self) -> str:
        per = f", {self.seconds / self.calls:.1f} s a call" if self.calls else ""
        calls = f" ({self.calls} calls{per})" if self.live else ""
        return f"{self.name}: {self.seconds:.1f} s{calls}; load {self.load:.2f}"


@dataclass
class Clock:
    """Times the demo's stages as they run and prints each one as it ends."""

    stages: list[Stage] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    load_start: tuple[float, float, float] = field(default_factory=load_average)

    def stage(self, name: str, since: float, *, live: bool = True, calls: int = 0) -> Stage:
        s = Stage(name, live, round(time.perf_counter() - since, 1), calls, load_average()[0])
        self.stages.append(s)
        print(f"[{time.strftime('%H:%M:%S')}] {s.line()}", flush=True)
        return s

    def total(self) -> float:
        return round(time.perf_counter() - self.started, 1)


def top_field(path: str) -> str:
    """The top-level field a labelled leaf path belongs to (``line_items[0].quantity`` -> ``line_items``)."""
    return str(parse_path(path)[0])


def top_level_labels(label: Mapping[str, Any]) -> dict[str, bool]:
    """A document's top-level fields, each wrong if any of its leaves is (the judge rates top-level fields)."""
    out: dict[str, bool] = {}
    for leaf in label.get("fields") or []:
        name = top_field(leaf["path"])
        out[name] = out.get(name, False) or bool(leaf.get("wrong"))
    return out


def pick_trust_item(items: Sequence[JudgeInput], labels: Mapping[str, Mapping[str, Any]]) -> JudgeInput | None:
    """The output CONSTRUCT scores: the first parsed output with a wrong field (so its field scores
    can be set beside the labels), else the first parsed output."""
    wrong = [it for it in items if labels.get(it.doc_id, {}).get("wrong")]
    return (wrong or list(items) or [None])[0]


def trust_row(run: RunDir, item: JudgeInput, endpoint: Any, *, cache: bool = True) -> tuple[dict[str, Any], int]:
    """CONSTRUCT's result for ``item`` (TLM's medium preset), from ``trust.json`` where it already
    holds this output's result (not a failed request), else from :func:`construct_eval.trust` now;
    and the calls made."""
    path = run.path / TRUST_FILE
    if path.exists():
        stored = json.loads(path.read_text())
        same = stored.get("id") == item.doc_id and stored.get("output_hash") == item.output_hash
        # a result whose calls failed (its reason names each template's, "<template>: request_failed: ...")
        # is made again; an unreadable reply is TLM's answer and is kept
        if same and Unscored.REQUEST_FAILED not in str(stored.get("reason") or ""):
            return stored, 0
    from construct_eval.scorers.construct import trust

    result = trust(item.request, item.schema, item.output, endpoint=endpoint, preset=TRUST_PRESET, cache=cache)
    row = {"id": item.doc_id, "output_hash": item.output_hash, "preset": TRUST_PRESET, **asdict(result)}
    path.write_text(json.dumps(row, indent=2, ensure_ascii=False) + "\n")
    return row, result.calls


def judge_config() -> Any:
    from construct_eval.judging.judgment import JudgeConfig

    # the card's prompt with the rating alone forced (grammar:rating-only): small models put their
    # rating first anyway, and an explanation cap set the rating for them (results/runs/README.md)
    return JudgeConfig(max_tokens=16, explanation_cap=0)


def run_live(out: Path, endpoint: Any, clock: Clock, *, n_docs: int, cache: bool = True) -> None:
    """The live stages on an open endpoint: generate, label, judge, CONSTRUCT for one output."""
    from construct_eval.data.datasets import load_dataset
    from construct_eval.data.generate import GenerationConfig, generate_run
    from construct_eval.judging.scoring import judge_run
    from construct_eval.llm.client import make_client, run_sync
    from construct_eval.reports.collect import label_run

    run = RunDir(out / LIVE)
    t = time.perf_counter()
    dataset = load_dataset("synthetic", n=n_docs, seed=0)

    async def gen() -> Any:
        async with make_client(endpoint, identify_server=False, cache=cache) as client:
            return await generate_run(run, dataset, client, GenerationConfig(max_tokens=600))

    summary = run_sync(gen())
    clock.stage(f"generate JSON for {documents(n_docs)}", t, calls=summary.written)

    t = time.perf_counter()
    s = label_run(run)
    clock.stage(
        f"label: {s['documents_wrong']}/{s['documents']} documents wrong, {s['unparsed']} unparsed",
        t,
        live=False,
    )

    t = time.perf_counter()
    before = _lines(run, "judgments")
    judge_run(run, endpoint, ["doc", "field"], config=judge_config(), cache=cache, identify_server=False)
    clock.stage("judge per document and per field", t, calls=_lines(run, "judgments") - before)

    t = time.perf_counter()
    items, _ = run.judge_inputs()
    labels = {r["id"]: r for r in run.read("labels")}
    item = pick_trust_item(items, labels)
    calls = 0
    if item is not None:
        _, calls = trust_row(run, item, endpoint, cache=cache)
    clock.stage(f"CONSTRUCT's trust score for one output ({TRUST_PRESET} preset)", t, calls=calls)


def _lines(run: RunDir, name: str) -> int:
    path = run.file(name)
    return path.read_text().count("\n") if path.exists() else 0


# --------------------------------------------------------------------------- the live part of the report


def _rating(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, int | float) else str(value)


def _expected(value: Any) -> str:
    return "-" if value is None else f"{float(value):.2f}"


@dataclass(frozen=True)
class LiveItems:
    """What the live run holds, per document: its label, its judgments and CONSTRUCT's result."""

    labels: dict[str, dict[str, Any]]
    judgments: dict[tuple[str, str], dict[str, Any]]
    kinds: dict[str, str]
    trust: dict[str, Any] | None

    @classmethod
    def read(cls, run: RunDir) -> LiveItems:
        labels = {r["id"]: r for r in run.read("labels")}
        judgments = (
            {(j["doc_id"], j["field"]): j for j in run.read("judgments")} if run.file("judgments").exists() else {}
        )
        kinds = {r["id"]: str(r.get("kind") or r.get("doc_type") or "") for r in run.records()}
        path = run.path / TRUST_FILE
        trust = json.loads(path.read_text()) if path.exists() else None
        return cls(labels, judgments, kinds, trust)

    def documents(self) -> list[str]:
        return list(self.labels)

    def fields(self, doc_id: str) -> list[str]:
        return [f for (d, f) in self.judgments if d == doc_id and f != DOCUMENT]


def document_rows(live: LiveItems) -> list[tuple[str, ...]]:
    rows = []
    for doc_id in live.documents():
        label = live.labels[doc_id]
        top = top_level_labels(label)
        doc = live.judgments.get((doc_id, DOCUMENT), {})
        fields = [live.judgments[(doc_id, f)] for f in live.fields(doc_id)]
        rated = [j for j in fields if j.get("rating") is not None]
        lowest = min(rated, key=lambda j: (j["rating"], j.get("expected_rating") or 0.0), default=None)
        parsed = not label.get("parse_failed")
        rows.append(
            (
                f"`{doc_id}`",
                "no: not judged" if not parsed else "yes",
                f"{sum(top.values())} of {len(top)}" if parsed else "all",
                _rating(doc.get("rating")),
                _expected(doc.get("expected_rating")),
                f"{_rating(lowest['rating'])} (`{lowest['field']}`)" if lowest else "-",
            )
        )
    return rows


def field_rows(live: LiveItems, doc_id: str) -> list[tuple[str, ...]]:
    top = top_level_labels(live.labels[doc_id])
    trust = live.trust or {}
    fields = trust.get("fields") or {}
    rows = []
    for name in live.fields(doc_id):
        j = live.judgments[(doc_id, name)]
        score = fields.get(name)
        rows.append(
            (
                f"`{name}`",
                "wrong" if top.get(name) else "right",
                _rating(j.get("rating")),
                _expected(j.get("expected_rating")),
                "-" if score is None else f"{score:.3f}",
            )
        )
    return rows


def live_lines(out: Path, model: str, n_docs: int) -> list[str]:
    """The live part of the report, from the live run folder: each document's label and ratings,
    then one output field by field beside CONSTRUCT's scores."""
    from construct_eval.reports.tables import markdown_table

    def table(header: list[str], rows: list[tuple[str, ...]]) -> list[str]:
        return markdown_table([dict(zip(header, r, strict=True)) for r in rows], header).rstrip("\n").split("\n")

    live = LiveItems.read(RunDir(out / LIVE))
    docs = live.documents()
    parsed = [d for d in docs if not live.labels[d].get("parse_failed")]
    wrong = [d for d in docs if live.labels[d].get("wrong")]
    calls = len(live.judgments)
    lines = [
        f"## Live: {documents(n_docs)}, extracted and judged now by `{model}`",
        "",
        f"The model extracted JSON from {len(docs)} synthetic business documents and {len(parsed)} of its"
        f" outputs parsed; labelled against the ground truth, {len(wrong)} of the {len(docs)} have at least one"
        " wrong field."
        f" Each parsed output was then judged with the card's prompt, the reply forced to `Rating: [[x]]`"
        f" (1-10, 10 = trustworthy), once for the document and once for each top-level field: {calls} calls."
        " The expected rating is the rating its log-probs give.",
        "",
        *table(
            ["document", "parsed", "top-level fields wrong", "judge rating", "expected rating", "lowest field rating"],
            document_rows(live),
        ),
        "",
        f"{len(docs)} documents are far too few to say whether a score finds the wrong ones; the recorded"
        " study below answers that on 600.",
    ]
    written = {j.get("rating") for j in live.judgments.values() if j.get("rating") is not None}
    if len(written) == 1:
        lines[-1] += (
            f" Every rating the judge wrote here is a {written.pop()}: a model this small, its reply forced to a"
            " rating, writes one value (only its expected rating moves); the recorded study shows what a judge's"
            " ratings mean where they vary."
        )
    trust = live.trust
    if trust is not None:
        doc_id = trust["id"]
        if trust.get("score") is None:
            result = f"no score: {trust.get('reason')}"
        else:
            result = f"**{trust['score']:.3f}** (0 to 1, 1 = trustworthy)"
        lines += [
            "",
            f"### One output, field by field: `{doc_id}`",
            "",
            f"CONSTRUCT (the paper's method as TLM computes it; `construct_eval.trust(...)`, {trust['preset']} preset)"
            f" scored this output {result}, from {trust['calls']} calls in {trust['seconds']:.0f} s"
            f" ({trust['tokens']} tokens). Beside it, each top-level field's label, the judge's rating and"
            " CONSTRUCT's field score (TLM scores the keys the output has; `-` for a field it left out):",
            "",
            *table(
                ["field", "label", "judge rating", "expected rating", "CONSTRUCT field score"], field_rows(live, doc_id)
            ),
        ]
        if trust.get("explanation"):
            text = " ".join(str(trust["explanation"]).split())
            lines += ["", f"TLM's explanation (first 300 characters): _{text[:300]}_"]
    return lines


# --------------------------------------------------------------------------- comparison with a recorded demo


def live_values(out: Path) -> dict[str, Any]:
    """What a live run says that the same model, seed and llama.cpp build reproduce, keyed for
    comparison: each label, rating and expected rating (the judge's calls are made at temperature 0)."""
    run = RunDir(out / LIVE)
    if not run.file("labels").exists():
        return {}
    live = LiveItems.read(run)
    values: dict[str, Any] = {}
    for doc_id, label in live.labels.items():
        values[f"{doc_id} wrong"] = bool(label.get("wrong"))
    for (doc_id, name), j in live.judgments.items():
        values[f"{doc_id} {name} rating"] = j.get("rating")
        e = j.get("expected_rating")
        values[f"{doc_id} {name} expected rating"] = None if e is None else round(float(e), 2)
    return values


def trust_score(out: Path) -> str:
    path = out / LIVE / TRUST_FILE
    if not path.exists():
        return "-"
    row = json.loads(path.read_text())
    return f"{row['score']:.3f}" if row.get("score") is not None else "none"


def compare_live(out: Path, recorded: Path) -> list[str]:
    """Lines for the report: how many of the live values agree with the recorded demo's, the ones
    that differ, and CONSTRUCT's score beside the recorded one."""
    now, then = live_values(out), live_values(recorded)
    if not then:
        return [f"_No recorded live part at `{recorded}` to compare with._"]
    keys = sorted(set(now) | set(then))
    differ = [k for k in keys if now.get(k, "missing") != then.get(k, "missing")]
    lines = [
        f"**Live part:** {len(keys) - len(differ)} of {len(keys)} values (labels, ratings, expected ratings"
        " to two decimals) as recorded."
    ]
    if differ:
        lines += ["", "| value | now | recorded |", "|---|---|---|"]
        lines += [f"| {k} | {now.get(k, '-')} | {then.get(k, '-')} |" for k in differ[:20]]
        if len(differ) > 20:
            lines.append(f"| ... {len(differ) - 20} more | | |")
    lines += [
        "",
        f"CONSTRUCT's trust score: {trust_score(out)} now, {trust_score(recorded)} recorded. TLM sets no"
        " temperature for four of its five calls, so the server samples them and the score can differ from"
        " run to run (a rerun from the response cache repeats it).",
    ]
    return lines
