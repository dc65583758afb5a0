"""A trust policy: fitted on labelled outputs, saved as a small JSON file, applied to new ones.

:meth:`Policy.fit` takes one scorer at one level (documents, or fields pooled over documents) of
a labelled run and keeps what using it on new outputs needs:

- the **threshold**: the Learn-then-Test auto-accept threshold for ``alpha`` and ``delta``
  (:func:`~construct_eval.decide.thresholds.choose_threshold`), with its test, bound and coverage,
  or "no threshold meets alpha at this n" and about how many labelled documents would do;
- the **calibration map** from score to P(wrong): isotonic or Platt, whichever has the lower
  out-of-fold Brier score (folds by document), the base rate beside it; the base rate itself
  where neither beats it, or where the score has one value (a constant is not calibrated);
- the **reference** the guarantee assumes new outputs are drawn like: the fitting run's scores
  by document (and, per field, each document's field count and empty fields);
- **identity**: the scorer and its configuration (judge model, endpoint, preset or prompt), the
  schema's top-level fields, the package version and a digest of the fitting run's label and
  score files.

:meth:`Policy.apply` decides on scored outputs without labels: each item's calibrated P(wrong),
``accept`` or ``review`` and why; a review queue, riskiest first; and a summary that quotes the
bound only when the new outputs' scores look drawn like the fitting run's (a permutation test with
documents as the unit: they move together between the two samples, so dependence within a
document is kept). :meth:`Policy.check` reads labels that come back: the realised error among
accepted items with an interval, whether it is above alpha beyond chance, and with few labels the
prediction-powered estimate of the error rate among all items.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from construct_eval.data.runs import RunDir
from construct_eval.decide.calibration_map import calibrated, fit_calibration
from construct_eval.decide.report import decide_items, find_items
from construct_eval.decide.shift import shift_test
from construct_eval.digest import sha256_hex
from construct_eval.fields import DOCUMENT, is_empty
from construct_eval.provenance import stage_model
from construct_eval.reports.collect import ScoredItems, collect, collect_unlabelled
from construct_eval.scorer_registry import checked
from construct_eval.types import ScorerId

POLICY_VERSION = 1
"""The policy file's format; a file of another version is refused with both versions named."""
SHIFT_LEVEL = 0.05
"""A two-sample test below this p-value says the new outputs are not drawn like the fitting run's."""
STAGE_OF = {"p-correct": "verdict", "reflection": "reflection", "construct": "construct", "construct-gen": "construct"}
"""The run metadata entry (``run.json``) holding a scorer family's configuration; judges' is ``judge``."""


class PolicyError(ValueError):
    """A policy file or the outputs it is applied to are not what it was fitted for: the message
    names the file, the field and the difference."""


# --------------------------------------------------------------------------- the policy


def run_outputs(run: RunDir, data_dir: str | Path | None = None) -> dict[str, Any]:
    """Each document's output as the judge saw it (planted errors applied, documents joined)."""
    items, _ = run.judge_inputs(data_dir=data_dir)
    return {i.doc_id: i.output for i in items}


def _output_shapes(outputs: Mapping[str, Any], doc_ids: Sequence[str]) -> dict[str, list[int]]:
    """Each document's [top-level fields, empty ones] from its output."""
    out = {}
    for doc_id in doc_ids:
        output = outputs.get(doc_id)
        if isinstance(output, dict):
            out[doc_id] = [len(output), sum(is_empty(v) for v in output.values())]
    return out


def _by_document(items: ScoredItems, docs: set[str] | None = None) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for d, s in zip(items.doc_ids, items.scores, strict=True):
        if docs is None or d in docs:
            out.setdefault(d, []).append(round(float(s), 6))
    return out


def _schema_fields(run: RunDir, outputs: Mapping[str, Any]) -> list[str]:
    """The top-level fields of the run's schema, and of every output (runs whose documents each
    have their own schema, such as the synthetic set's kinds, hold their union)."""
    schema = run.schema() or {}
    names = dict.fromkeys((schema.get("properties") or {}).keys())
    for output in outputs.values():
        if isinstance(output, dict):
            names.update(dict.fromkeys(output))
    return list(names)


def _scorer_config(run: RunDir, sid: ScorerId) -> dict[str, Any]:
    meta = run.meta()
    stage = "judge" if sid.is_judge else STAGE_OF.get(sid.family)
    config = dict(meta.get(stage) or {}) if stage else {}
    if sid.family in ("token_logprob", "consistency"):
        config = dict(meta.get("generator") or {})
    if sid.family == "construct-gen":  # its samples and token probability are the generator's
        config["generator_model"] = stage_model(meta, "generator")
    endpoint = config.get("endpoint") or {}
    return {
        "scorer": sid.name,
        "family": sid.family,
        "stage": stage,
        "model": endpoint.get("model"),
        "endpoint_id": endpoint.get("endpoint_id") or endpoint.get("base_url"),
        "base_url": endpoint.get("base_url"),
        "settings": {k: v for k, v in config.items() if k != "endpoint"},
    }


def _digest(run: RunDir, sid: ScorerId, docs: Sequence[str]) -> str:
    """The fitting data: the scorer, the documents fitted on, and the run's label and score files."""
    parts = [sha256_hex(json.dumps(sorted(docs)))]
    for name in ("labels", "scores", "plausibility", "judgments"):
        path = run.file(name)
        if path.exists():
            parts.append(f"{name}:{hashlib.sha256(path.read_bytes()).hexdigest()}")
    return sha256_hex("|".join([sid.name, *parts]))[:16]


@dataclass
class Decision:
    """One item's decision: its document and field, score, calibrated P(wrong), and why."""

    id: str
    field: str
    score: float | None
    p_wrong: float | None
    decision: str  # "accept" or "review"
    reason: str


@dataclass
class Applied:
    """What :meth:`Policy.apply` decided: every item, the review queue and the summary."""

    decisions: list[Decision]
    summary: dict[str, Any]

    @property
    def queue(self) -> list[Decision]:
        """Items to review, riskiest first (no score first, then by P(wrong), then lowest score)."""
        todo = [d for d in self.decisions if d.decision == "review"]
        return sorted(todo, key=lambda d: (d.p_wrong is not None, -(d.p_wrong or 0.0), d.score or 0.0, d.id, d.field))

    def text(self) -> str:
        return "\n".join(self.summary["lines"])

    def save(self, folder: str | Path) -> list[Path]:
        """``decisions.jsonl``, ``review_queue.csv`` and ``.jsonl``, ``summary.json`` and ``.md``."""
        import csv

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "decisions.jsonl", out / "review_queue.jsonl", out / "review_queue.csv"]
        paths[0].write_text("".join(json.dumps(asdict(d)) + "\n" for d in self.decisions))
        paths[1].write_text("".join(json.dumps(asdict(d)) + "\n" for d in self.queue))
        with paths[2].open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(asdict(Decision("", "", None, None, "", ""))))
            writer.writeheader()
            writer.writerows(asdict(d) for d in self.queue)
        (out / "summary.json").write_text(json.dumps(self.summary, indent=1) + "\n")
        (out / "summary.md").write_text("# Review summary\n\n" + "".join(f"- {x}\n" for x in self.summary["lines"]))
        return [*paths, out / "summary.json", out / "summary.md"]


@dataclass
class Policy:
    """A fitted trust policy (see the module docstring); JSON round-trips through :meth:`save`
    and :meth:`load`."""

    scorer: str
    level: str
    alpha: float
    delta: float
    field_test: str
    threshold: float | None
    answer: dict[str, Any]
    guarantee: str
    calibration: dict[str, Any]
    reference: dict[str, Any]
    scorer_config: dict[str, Any]
    schema_fields: list[str]
    fitted_on: dict[str, Any]
    package_version: str = ""
    version: int = POLICY_VERSION

    @cached_property
    def scorer_id(self) -> ScorerId:
        """The policy's scorer as its identity, read once (the file keeps its name)."""
        return checked(self.scorer)

    # -- fitting

    @classmethod
    def fit(
        cls,
        run: str | Path | RunDir,
        scorer: str | ScorerId,
        *,
        alpha: float = 0.05,
        delta: float = 0.1,
        level: str | None = None,
        field_test: str = "wsr",
        documents: Sequence[str] | None = None,
        data_dir: str | Path | None = None,
        seed: int = 0,
    ) -> Policy:
        """Fit on a labelled run (only ``documents``, where given: a split's fitting half)."""
        from construct_eval import __version__

        rd = run if isinstance(run, RunDir) else RunDir(run, create=False)
        sid = ScorerId.of(scorer)
        try:
            items = find_items(collect(rd), sid, level or sid.level.value)
        except ValueError as exc:
            raise PolicyError(f"{rd.path}: {exc}") from None
        if documents is not None:
            items = only_documents(items, set(documents))
        report = decide_items(items, run_name=rd.path.name, alpha=alpha, delta=delta, field_test=field_test)
        a = report.answer
        y, s, g = items.arrays()
        calibration = fit_calibration(s, y, g, seed=seed)
        docs = sorted(set(items.doc_ids))
        outputs = run_outputs(rd, data_dir)
        reference: dict[str, Any] = {"scores": list(_by_document(items).values())}
        sets = {tuple(sorted(outputs[d])) for d in docs if isinstance(outputs.get(d), dict)}
        reference["field_sets"] = [list(x) for x in sorted(sets)]  # one per schema the outputs follow
        if items.level == "field":
            reference["outputs"] = list(_output_shapes(outputs, docs).values())
        return cls(
            scorer=sid.name if items.level == "document" else items.scorer.name,
            level=str(items.level),
            alpha=alpha,
            delta=delta,
            field_test=field_test,
            threshold=a.threshold,
            answer=a.to_row(),
            guarantee=_guarantee_sentence(a.level, alpha, delta, a.threshold),
            calibration=calibration,
            reference=reference,
            scorer_config=_scorer_config(rd, sid),
            schema_fields=_schema_fields(rd, {d: outputs[d] for d in docs if d in outputs}),
            fitted_on={"run": rd.path.name, "digest": _digest(rd, sid, docs), "documents": len(docs), "items": items.n},
            package_version=__version__,
        )

    # -- the file

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(asdict(self), indent=1, allow_nan=False, default=_plain) + "\n")
        return p

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """Read a policy file; a file of another version, or one out of shape, is refused naming
        the file and what is wrong."""
        p = Path(path)
        try:
            data = json.loads(p.read_text())
        except FileNotFoundError:
            raise PolicyError(f"{p}: no such policy file") from None
        except ValueError as exc:
            raise PolicyError(f"{p}: not a JSON policy file ({exc})") from None
        if not isinstance(data, dict):
            raise PolicyError(f"{p}: a policy file holds one JSON object, found {type(data).__name__}")
        version = data.get("version")
        if version != POLICY_VERSION:
            raise PolicyError(
                f"{p}: policy file version {version!r}; this construct-eval reads version {POLICY_VERSION}"
            )
        wanted = {f.name: f.type for f in cls.__dataclass_fields__.values()}  # type: ignore[attr-defined]
        missing = [k for k in wanted if k not in data and k not in ("package_version", "version")]
        if missing:
            raise PolicyError(f"{p}: field(s) {missing} missing: the file was edited or cut short")
        unknown = sorted(set(data) - set(wanted))
        if unknown:
            raise PolicyError(f"{p}: unknown field(s) {unknown}: the file was edited")
        _check_shape(p, data)
        policy = cls(**data)
        try:
            policy.scorer_id  # noqa: B018  (the scorer's name read once, here, where the file enters)
        except ValueError as exc:
            raise PolicyError(f"{p}: {exc}") from None
        return policy

    # -- applying

    def items_of(self, run: RunDir) -> ScoredItems:
        """The policy scorer's items on a run of new outputs (no labels needed)."""
        wanted = self.scorer_id
        for it in collect_unlabelled(run):
            if str(it.level) == self.level and it.scorer == wanted:
                return it
        names = sorted({it.scorer.name for it in collect_unlabelled(run) if str(it.level) == self.level})
        raise PolicyError(
            f"{run.path}: no {self.level}-level scores of {self.scorer!r}, the policy's scorer; the run has: "
            f"{', '.join(names) or 'none'}"
        )

    def check_config(self, run: RunDir) -> None:
        """Refuse scores made another way than the policy's: another judge model, endpoint or
        setting (preset, prompt, granularity) than the fitting run's, each named."""
        theirs = _scorer_config(run, self.scorer_id)
        mine = self.scorer_config
        diffs = [
            f"{k}: policy {mine.get(k)!r}, run {theirs.get(k)!r}"
            for k in ("model", "endpoint_id")
            if mine.get(k) and theirs.get(k) and mine.get(k) != theirs.get(k)
        ]
        ours, new = mine.get("settings") or {}, theirs.get("settings") or {}
        diffs += [f"{k}: policy {ours[k]!r}, run {new[k]!r}" for k in sorted(ours) if k in new and ours[k] != new[k]]
        if diffs:
            raise PolicyError(
                f"{run.path}: {self.scorer} was scored another way than the policy was fitted on: " + "; ".join(diffs)
            )

    @property
    def calls_a_model(self) -> bool:
        """Whether scoring new outputs for this policy calls a model (CONSTRUCT does)."""
        return self.scorer_config.get("family") in ("construct", "construct-gen")

    def complete_scores(
        self, run: str | Path | RunDir, *, client: Any = None, data_dir: str | Path | None = None
    ) -> list[str]:
        """Make the scores this policy reads that ``run`` (new outputs, no labels) lacks, and say
        what was made, a line each: CONSTRUCT for the outputs it has not scored yet, with the
        preset the policy was fitted on (through ``client``; without one, the run's own rows are
        used as they are; resumable), and the plausibility checks where the run has none (from
        documents and outputs alone)."""
        rd = run if isinstance(run, RunDir) else RunDir(run, create=False)
        family, said = self.scorer_config.get("family"), []
        if self.calls_a_model and client is not None:
            from construct_eval.scorers.construct import construct_run

            settings = self.scorer_config.get("settings") or {}
            report = construct_run(rd, client, preset=settings.get("preset", "medium"), data_dir=data_dir,
                                   reasoning_effort=settings.get("reasoning_effort"), progress=False)  # fmt: skip
            said.append(f"CONSTRUCT: {report.written} call(s) made for outputs not yet scored")
        if family == "plausibility" and not rd.file("plausibility").exists():
            from construct_eval.scorers.plausibility import plausibility_run

            scored = plausibility_run(rd, data_dir=data_dir)
            said.append(f"plausibility checks written for {scored} outputs (the run had none; no labels needed)")
        return said

    def review_run(
        self,
        run: str | Path | RunDir,
        *,
        new_fields: str = "error",
        n_perm: int = 999,
        data_dir: str | Path | None = None,
    ) -> Applied:
        """:meth:`apply` to a run folder of new outputs, its scores' configuration checked first;
        an error names the run folder."""
        rd = run if isinstance(run, RunDir) else RunDir(run, create=False)
        self.check_config(rd)
        outputs = run_outputs(rd, data_dir)
        try:
            return self.apply(self.items_of(rd), outputs=outputs, new_fields=new_fields, n_perm=n_perm)
        except PolicyError as exc:
            raise PolicyError(f"{rd.path}: {exc}") from None

    def apply(
        self,
        items: ScoredItems,
        *,
        outputs: Mapping[str, Any] | None = None,
        new_fields: str = "error",
        n_perm: int = 999,
    ) -> Applied:
        """Decide on new scored items (``wrong`` unknown). ``outputs`` (document id -> output)
        lets the fields and shapes be checked against the fitting run's; a field the policy never
        saw stops with an error naming it, or (``new_fields="review"``) goes to review saying so."""
        if new_fields not in ("error", "review"):
            raise ValueError(f"new_fields must be 'error' or 'review', got {new_fields!r}")
        if items.scorer != self.scorer_id or str(items.level) != self.level:
            raise PolicyError(
                f"the items are {items.scorer.name!r} at the {items.level} level; the policy is for "
                f"{self.scorer!r} at the {self.level} level"
            )
        known = set(self.schema_fields)
        unseen: dict[str, set[str]] = {}
        for doc_id, output in (outputs or {}).items():
            if isinstance(output, dict) and known:
                extra = set(output) - known
                if extra:
                    unseen[doc_id] = extra
                sets = [set(x) for x in self.reference.get("field_sets") or [list(known)]]
                lacking = min((x - set(output) for x in sets), key=len)
                if lacking:
                    raise PolicyError(
                        f"document {doc_id!r}: field(s) {sorted(lacking)} the policy was fitted on are missing"
                    )
        if unseen and new_fields == "error":
            doc_id, extra = next(iter(sorted(unseen.items())))
            raise PolicyError(
                f"document {doc_id!r}: field(s) {sorted(extra)} the policy never saw ({len(unseen)} document(s) have "
                "such fields); fit a policy on outputs of this schema, or send them to review (--new-fields review)"
            )
        s = np.asarray(items.scores, dtype=float)
        p_wrong = calibrated(self.calibration, s) if len(s) else np.zeros(0)
        decisions = []
        for doc_id, name, score, p in zip(items.doc_ids, items.fields, s, p_wrong, strict=True):
            top = name.split(".")[0].split("[")[0]
            if doc_id in unseen and (name == DOCUMENT or top in unseen[doc_id]):
                decisions.append(
                    Decision(doc_id, name, float(score), float(p), "review", "a field the policy never saw")
                )
            elif self.threshold is None:
                decisions.append(
                    Decision(doc_id, name, float(score), float(p), "review", "the policy has no threshold")
                )
            elif score >= self.threshold:
                why = f"score {score:.4g} >= threshold {self.threshold:.4g}"
                decisions.append(Decision(doc_id, name, float(score), float(p), "accept", why))
            else:
                why = f"score {score:.4g} < threshold {self.threshold:.4g}"
                decisions.append(Decision(doc_id, name, float(score), float(p), "review", why))
        scored = set(zip(items.doc_ids, items.fields, strict=True))
        for doc_id, name in sorted(items.seen - scored):
            decisions.append(Decision(doc_id, name, None, None, "review", "the scorer gave no score"))
        shift = self._shift(items, outputs, n_perm)
        return Applied(decisions, self._summary(decisions, shift, len(set(items.doc_ids) | {d for d, _ in items.seen})))

    def _shift(self, items: ScoredItems, outputs: Mapping[str, Any] | None, n_perm: int) -> dict[str, Any]:
        tests = {"scores": shift_test(self.reference["scores"], list(_by_document(items).values()), n_perm=n_perm)}
        if self.level == "field" and outputs and self.reference.get("outputs"):
            ref = self.reference["outputs"]
            new = [[len(o), sum(is_empty(v) for v in o.values())] for o in outputs.values() if isinstance(o, dict)]
            share = lambda rows: [[e / n] if n else [] for n, e in rows]  # noqa: E731 - one use, named by it
            tests["empty share"] = shift_test(share(ref), share(new), n_perm=n_perm)
            tests["fields per document"] = shift_test([[n] for n, _ in ref], [[n] for n, _ in new], n_perm=n_perm)
        return tests

    def _summary(self, decisions: Sequence[Decision], shift: Mapping[str, Any], documents: int) -> dict[str, Any]:
        accepted = sum(d.decision == "accept" for d in decisions)
        review = len(decisions) - accepted
        differ = _differ(shift)
        unit = "documents" if self.level == "document" else "fields"
        from construct_eval.decide.selective import scorer_label

        lines = [f"{scorer_label(self.scorer)}: {len(decisions):,} {unit} of {documents:,} documents"]
        lines.append(f"accept: {accepted:,}; to review: {review:,}")
        if self.threshold is None:
            need = self.answer.get("documents_needed")
            more = f"; about {int(need):,} labelled documents would be needed" if need else ""
            lines.append(
                f"no threshold meets alpha = {self.alpha:g} at the fitting run's n: everything goes to review{more}"
            )
        elif differ:
            first = shift[differ[0]]
            lines.append(
                f"the new outputs differ from the fitting run's ({', '.join(differ)}: KS distance "
                f"{first['statistic']:.3f}, permutation p = {first['p_value']:.3f}, Holm over {len(shift)} test(s)): "
                "the guarantee does not carry over"
            )
        else:
            bound = self.answer.get("risk_bound")
            n_new = (shift.get("scores") or {}).get("documents_new")
            tested = (  # a sentence of its own: the guarantee's sentence follows it
                f"The new outputs are not detectably different from the fitting run's (n = {n_new:,} documents). "
                if n_new
                else ""
            )
            lines.append(
                tested + self.guarantee + (f" Bound on the fitting run: {bound:.3f}." if bound is not None else "")
            )
        return {"accepted": accepted, "review": review, "items": len(decisions), "documents": documents,
                "shift": dict(shift), "guarantee_holds": self.threshold is not None and not differ,
                "lines": lines}  # fmt: skip

    def decide(
        self, text: str, schema: Mapping[str, Any] | None, output: Any, *, endpoint: Any = None, cache: Any = True
    ) -> Applied:
        """One output in real time: score it with the policy's scorer (CONSTRUCT, at the policy's
        preset) and decide on it and its fields. The shift test needs many outputs: one output's
        summary quotes the bound without it, saying so."""
        family = self.scorer_config.get("family") or self.scorer_id.family
        if family not in ("construct",):
            raise PolicyError(
                f"a {self.scorer!r} policy cannot score one output by itself: score the outputs as a run, "
                "then `construct-eval review`; real time works for CONSTRUCT policies"
            )
        from construct_eval.judging.judge import endpoint_from_env
        from construct_eval.scorers.construct import trust

        endpoint = endpoint if endpoint is not None else endpoint_from_env()
        want = self.scorer_config.get("model")
        if want and endpoint.model != want:
            raise PolicyError(
                f"the policy was fitted on {want!r}'s CONSTRUCT scores; this endpoint serves {endpoint.model!r}: "
                "a threshold fitted for one judge does not hold for another's scores"
            )
        settings = self.scorer_config.get("settings") or {}
        result = trust(text, schema, output, endpoint=endpoint, preset=settings.get("preset", "medium"),
                       reasoning_effort=settings.get("reasoning_effort"), cache=cache)  # fmt: skip
        if self.level == "document":
            pairs = [(DOCUMENT, result.score)]
        else:
            pairs = [(k, result.fields.get(k)) for k in (output if isinstance(output, dict) else {})]
        items = ScoredItems(self.scorer, self.level, doc_ids=[], fields=[], scores=[], wrong=[])
        for name, score in pairs:
            items.seen.add(("output", name))
            if score is not None:
                items.doc_ids.append("output")
                items.fields.append(name)
                items.scores.append(float(score))
                items.wrong.append(-1)
        applied = self.apply(items, outputs={"output": output}, new_fields="review", n_perm=0)
        applied.summary["shift"] = {}
        applied.summary["construct"] = {"calls": result.calls, "seconds": result.seconds, "reason": result.reason}
        if self.threshold is not None:
            applied.summary["lines"][-1] = (
                self.guarantee + " (one output: whether it is drawn like the fitting run's is not tested)"
            )
        return applied

    # -- labels come back

    def check(self, applied: Applied, labels: Mapping[tuple[str, str], int], *, seed: int = 0) -> dict[str, Any]:
        """Labels of some new items (``(document, field) -> wrong``): the realised error among
        accepted labelled items, with a 95% document-bootstrap interval and a one-sided bootstrap
        p-value of "at most alpha" (``above_alpha`` where it is below 0.05); and, where some
        documents are labelled and others not, the prediction-powered estimate (PPI++) of the mean
        over documents of the share of a document's items that are wrong, from the labelled
        documents and the calibrated P(wrong) of the rest. PPI assumes the labelled documents are a
        random sample of the new ones: labels that come back only for reviewed items are not."""
        from construct_eval.decide.few_labels import estimate

        acc = [
            (d, labels[(d.id, d.field)])
            for d in applied.decisions
            if d.decision == "accept" and (d.id, d.field) in labels
        ]
        out: dict[str, Any] = {"labelled": sum((d.id, d.field) in labels for d in applied.decisions)}
        if acc:
            docs = np.array([d.id for d, _ in acc])
            wrong = np.array([w for _, w in acc], dtype=float)
            rate, low, high, p = _clustered_rate(wrong, docs, self.alpha, seed=seed)
            out |= {"accepted_labelled": len(acc), "realised": rate, "low": low, "high": high, "p_above_alpha": p,
                    "above_alpha": bool(p < 0.05)}  # fmt: skip
        scored = [d for d in applied.decisions if d.p_wrong is not None]
        lab = [d for d in scored if (d.id, d.field) in labels]
        labelled_docs = {d.id for d in lab}
        if len(labelled_docs) >= 2:
            y_l = _per_document([d.id for d in lab], [labels[(d.id, d.field)] for d in lab])
            f_l = _per_document([d.id for d in lab], [d.p_wrong for d in lab])
            rest = [d for d in scored if d.id not in labelled_docs]
            if rest:
                f_u = _per_document([d.id for d in rest], [d.p_wrong for d in rest])
                out["ppi"] = estimate(y_l, f_l, f_u)  # the share of a document's items wrong, mean over documents
        return out


def read_labels(path: str | Path, decisions: Sequence[Decision]) -> dict[tuple[str, str], int]:
    """Labels that came back for new items, from a JSONL file: rows ``{"id", "field", "wrong"}``
    (``field`` ``__doc__`` for a document), or a ``labels.jsonl`` as ``construct-eval label``
    writes it (every decided item of a labelled document is then read from its field labels)."""
    from construct_eval.data.labels import DocumentLabels, judged_field_errors

    p = Path(path)
    out: dict[tuple[str, str], int] = {}
    wanted: dict[str, list[str]] = {}
    for d in decisions:
        wanted.setdefault(d.id, []).append(d.field)
    try:
        lines = p.read_text().splitlines()
    except FileNotFoundError:
        raise PolicyError(f"{p}: no such labels file") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise PolicyError(f"{p}, line {n}: not JSON ({exc})") from None
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise PolicyError(f"{p}, line {n}: a label row needs a string 'id'")
        if "fields" in row:  # a document's labels as `construct-eval label` writes them
            doc = DocumentLabels.from_dict(row)
            for name in wanted.get(row["id"], []):
                wrong = doc.wrong if name == DOCUMENT else judged_field_errors(doc, [name])[name]
                if wrong is not None:
                    out[(row["id"], name)] = int(wrong)
            continue
        if row.get("wrong") not in (0, 1, True, False) or not isinstance(row.get("field", DOCUMENT), str):
            raise PolicyError(f"{p}, line {n}: document {row['id']!r}: 'wrong' must be 0 or 1 and 'field' a name")
        out[(row["id"], row.get("field", DOCUMENT))] = int(row["wrong"])
    return out


def labelled_items(run: str | Path | RunDir, scorer: str | ScorerId, level: str | None = None) -> ScoredItems:
    """A scorer's labelled items on a run, at ``level`` (default: the scorer's own): what a policy
    is fitted on, and what labels that come back are read against."""
    rd = run if isinstance(run, RunDir) else RunDir(run, create=False)
    sid = ScorerId.of(scorer)
    return find_items(collect(rd), sid, level or sid.level.value)


def split_half(
    run: str | Path | RunDir,
    scorer: str,
    *,
    alpha: float = 0.05,
    delta: float = 0.1,
    seed: int = 0,
    n_perm: int = 999,
    data_dir: str | Path | None = None,
) -> dict[str, Any]:
    """A policy used as it would be: fitted on a random half of a labelled run's documents,
    applied to the other half as if it had no labels, then checked against that half's labels.
    One row: the threshold and bound from the fitting half, the share accepted of the other half,
    the realised error among its accepted items with a document-bootstrap interval, and whether it
    stayed within alpha."""
    rd = run if isinstance(run, RunDir) else RunDir(run, create=False)
    sid = ScorerId.parse(scorer)
    labelled = find_items(collect(rd), sid, sid.level.value)
    docs = np.array(sorted(set(labelled.doc_ids)))
    order = np.random.default_rng(seed).permutation(len(docs))
    fit_docs, new_docs = set(docs[order[: len(docs) // 2]]), set(docs[order[len(docs) // 2 :]])
    policy = Policy.fit(rd, sid, alpha=alpha, delta=delta, documents=sorted(fit_docs), data_dir=data_dir, seed=seed)
    fresh = only_documents(policy.items_of(rd), new_docs)
    outputs = {d: o for d, o in run_outputs(rd, data_dir).items() if d in new_docs}
    applied = policy.apply(fresh, outputs=outputs, new_fields="review", n_perm=n_perm)
    labels = {(d, f): w for d, f, w in zip(labelled.doc_ids, labelled.fields, labelled.wrong, strict=True)
              if d in new_docs}  # fmt: skip
    checked = policy.check(applied, labels, seed=seed)
    accepted = applied.summary["accepted"]
    row: dict[str, Any] = {
        "run": rd.path.name, "scorer": policy.scorer, "level": policy.level, "alpha": alpha, "delta": delta,
        "fit_documents": len(fit_docs), "threshold": policy.threshold, "bound": policy.answer.get("risk_bound"),
        "calibration": policy.calibration["method"], "new_documents": len(new_docs), "new_items": len(applied.decisions),
        "accepted": accepted, "accepted_share": accepted / max(len(applied.decisions), 1),
        "shift_p": applied.summary["shift"]["scores"].get("p_value"),
    }  # fmt: skip
    if "realised" in checked:
        row |= {"realised": checked["realised"], "realised_low": checked["low"], "realised_high": checked["high"],
                "within_alpha": checked["realised"] <= alpha, "above_alpha_beyond_chance": checked["above_alpha"]}  # fmt: skip
    return row


def _differ(shift: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The shift tests that reject at :data:`SHIFT_LEVEL` after Holm's correction over all of them."""
    from construct_eval.stats.bias import holm

    names = [k for k, t in shift.items() if t.get("p_value") == t.get("p_value") and t.get("p_value") is not None]
    adjusted = holm([shift[k]["p_value"] for k in names]) if names else []
    return [k for k, p in zip(names, adjusted, strict=True) if p < SHIFT_LEVEL]


def _per_document(doc_ids: Sequence[str], values: Sequence[float | None]) -> np.ndarray:
    """Each document's mean value, in the sorted order of the ids."""
    _, index = np.unique(np.asarray(doc_ids), return_inverse=True)
    v = np.asarray(values, dtype=float)
    return np.bincount(index, weights=v) / np.bincount(index)


def _clustered_rate(wrong: np.ndarray, docs: np.ndarray, alpha: float, *, n_boot: int = 2000, seed: int = 0):
    """The pooled error rate, its 95% document-bootstrap interval, and the one-sided bootstrap
    p-value of "no more than alpha" ((k + 1) / (B + 1), k resamples at or below alpha)."""
    codes, index = np.unique(docs, return_inverse=True)
    w = np.bincount(index, weights=wrong, minlength=len(codes))
    n = np.bincount(index, minlength=len(codes)).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(codes), size=(n_boot, len(codes)))
    rates = w[draws].sum(1) / np.maximum(n[draws].sum(1), 1)
    rate = float(w.sum() / n.sum())
    low, high = (float(x) for x in np.quantile(rates, [0.025, 0.975]))
    p = (int((rates <= alpha).sum()) + 1) / (n_boot + 1)
    return rate, low, high, p


def only_documents(items: ScoredItems, docs: set[str]) -> ScoredItems:
    """The items of ``docs`` only (a split's half of a run)."""
    keep = [i for i, d in enumerate(items.doc_ids) if d in docs]
    out = ScoredItems(
        items.scorer, items.level, granularity=items.granularity,
        doc_ids=[items.doc_ids[i] for i in keep], fields=[items.fields[i] for i in keep],
        scores=[items.scores[i] for i in keep], wrong=[items.wrong[i] for i in keep],
    )  # fmt: skip
    out.seen = {(d, f) for d, f in items.seen if d in docs}  # items of theirs the scorer gave no score stay known
    return out


def _guarantee_sentence(level: str, alpha: float, delta: float, threshold: float | None) -> str:
    unit = "documents" if level == "document" else "fields"
    if threshold is None:
        return f"No threshold keeps the share of accepted {unit} wrong at most {alpha:g} at this n: no guarantee."
    return (
        f"Over new documents drawn like the fitting run's, the share of accepted {unit} (score >= {threshold:.4g}) that "
        f"are wrong is at most {alpha:.0%}, with probability at least {1 - delta:.0%} over the draw of the labelled "
        "documents; one batch can exceed it by chance."
    )


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON: {type(value).__name__}")


def _check_shape(path: Path, data: Mapping[str, Any]) -> None:
    """The parts :meth:`Policy.apply` reads, in the shapes it reads them; else named."""

    def bad(where: str, want: str) -> PolicyError:
        return PolicyError(f"{path}: {where} must be {want}: the file was edited out of shape")

    if data["level"] not in ("document", "field"):
        raise bad("'level'", "'document' or 'field'")
    if not (isinstance(data["alpha"], float | int) and 0 < data["alpha"] < 1):
        raise bad("'alpha'", "a number in (0, 1)")
    t = data["threshold"]
    if t is not None and not (isinstance(t, float | int) and math.isfinite(t)):
        raise bad("'threshold'", "a number or null")
    cal = data["calibration"]
    if not isinstance(cal, dict) or cal.get("method") not in ("isotonic", "platt", "base rate"):
        raise bad("'calibration.method'", "'isotonic', 'platt' or 'base rate'")
    if cal["method"] == "isotonic":
        x, y = cal.get("x"), cal.get("y")
        if not (isinstance(x, list) and isinstance(y, list) and len(x) == len(y) > 0 and x == sorted(x)):
            raise bad("'calibration.x' and 'calibration.y'", "two lists of equal length, x increasing")
    if cal["method"] == "platt" and not all(
        isinstance(cal.get(k), float | int) for k in ("coef", "intercept", "center", "scale")
    ):
        raise bad("'calibration' (platt)", "numbers coef, intercept, center and scale")
    if not isinstance(cal.get("base_rate"), float | int):
        raise bad("'calibration.base_rate'", "a number")
    if cal["method"] == "isotonic" and not all(isinstance(v, float | int) for v in (*cal["x"], *cal["y"])):
        raise bad("'calibration.x' and 'calibration.y'", "numbers")
    for key in ("answer", "scorer_config", "reference", "fitted_on"):
        if not isinstance(data[key], dict):
            raise bad(f"'{key}'", "an object")
    scores = (data["reference"] or {}).get("scores")
    if not isinstance(scores, list) or not all(isinstance(d, list) for d in scores):
        raise bad("'reference.scores'", "a list of each document's scores")
    if not isinstance(data["schema_fields"], list):
        raise bad("'schema_fields'", "a list of field names")


__all__ = [
    "Applied",
    "Decision",
    "Policy",
    "PolicyError",
    "calibrated",
    "fit_calibration",
    "read_labels",
    "shift_test",
    "split_half",
]
