"""CONSTRUCT's parts: what each of TLM's five reflection templates contributes on one run.

CONSTRUCT's document score at the medium preset is the mean of five templates' scores, and a
field's score the rescaled mean of the four templates that score fields. When the whole does not
find errors, the parts say why: a template that finds them and others that add noise, or none that
does. Per template, from the run's ``construct.jsonl`` (its latest row per call, of the
configuration that made the run's ``construct`` scores):

- ``asked`` outputs, ``unreadable`` replies (TLM could not read them; the output is unscored) and
  their share;
- ``no_score_tag`` (the argument template): replies without ``<score>`` tags, whose score TLM's
  last regular expression reads from the last number in the text (any number, often a field's);
- ``at_half``: replies whose overall score is exactly 0.5, the value TLM's mappings give a
  reply that holds no number it can map;
- its own AUROC for finding wrong outputs (its overall score) and wrong top-level fields (its field
  readings), each with a 95% document-bootstrap interval;
- ``flags_right``: the share of right fields it flags (a reading below 0.5: listed as incorrect,
  "Uncertain" or "Likely Incorrect", or under 50 of 100), and ``misses_wrong``: the share of wrong
  fields it does not flag.

The last row is CONSTRUCT itself, from the run's ``construct`` score rows, on the same outputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from construct_eval.data.labels.summary import judged_field_errors
from construct_eval.data.runs import RunDir
from construct_eval.fields import DOCUMENT
from construct_eval.reports.collect import load_labels
from construct_eval.reports.tables import write_table
from construct_eval.scorers import construct as cs
from construct_eval.scorers import construct_method as cm
from construct_eval.stats.metrics import auroc_interval

TABLE = "construct_parts"
FLAG_BELOW = 0.5
"""A field reading under this is a flag: the incorrect-fields templates read 0.1 for a field they
list and 0.9 for one they do not; the certainty words map to 1, 0.75, 0.5, 0.25 and 0; scores
are read out of 100."""


def _latest_calls(run: RunDir) -> list[Mapping[str, Any]]:
    """The latest audit row of each call of the configuration the run's CONSTRUCT meta names."""
    meta = run.meta().get("construct") or {}
    endpoint = (meta.get("endpoint") or {}).get("endpoint_id")
    rows: dict[tuple[str, str, int], Mapping[str, Any]] = {}
    for r in run.iter_rows(cs.FILE):
        if meta and (r.get("preset") != meta.get("preset") or (endpoint and r.get("endpoint_id") != endpoint)):
            continue
        rows[(r["id"], r["template"], int(r.get("index", 0)))] = r
    return list(rows.values())


def _interval(wrong: Sequence[int], score: Sequence[float], docs: Sequence[str], n_boot: int) -> dict[str, Any]:
    from construct_eval.power import MIN_CLASS_ITEMS, MIN_DOCUMENTS

    y = np.asarray(wrong, dtype=float)
    small = min(int(y.sum()), len(y) - int(y.sum())) < MIN_CLASS_ITEMS or len(set(docs)) < MIN_DOCUMENTS
    note = {"underpowered": "yes: too few wrong or right items, or documents, to rank it" if small else ""}
    if len(y) == 0 or y.min() == y.max():
        return {"auroc": float("nan"), "auroc_low": float("nan"), "auroc_high": float("nan"), **note}
    iv = auroc_interval(y, np.asarray(score, dtype=float), np.asarray(docs), n_boot=n_boot)
    return {"auroc": round(iv.estimate, 4), "auroc_low": round(iv.low, 4), "auroc_high": round(iv.high, 4), **note}


def parts_table(run: RunDir, *, n_boot: int = 1000) -> list[dict[str, Any]]:
    """One row per (template or CONSTRUCT, level), on the outputs every template was asked about."""
    labels = load_labels(run)
    calls = _latest_calls(run)
    by_template: dict[str, dict[str, Mapping[str, Any]]] = {}
    for r in calls:
        by_template.setdefault(r["template"], {})[r["id"]] = r
    asked = set.intersection(*(set(v) for v in by_template.values())) if by_template else set()
    asked = {d for d in asked if d in labels}
    truth: dict[str, dict[str, bool | None]] = {}
    for doc_id in sorted(asked):
        keys = list((by_template.get("field-accuracy", {}).get(doc_id) or {}).get("fields") or {})
        if not keys:  # the field names from any template that read them
            keys = next((list(t[doc_id]["fields"]) for t in by_template.values() if t[doc_id].get("fields")), [])
        truth[doc_id] = judged_field_errors(labels[doc_id], keys) if keys else {}
    out: list[dict[str, Any]] = []
    for t in cm.templates():
        rows = [by_template.get(t.id, {})[d] for d in sorted(asked) if d in by_template.get(t.id, {})]
        unreadable = [r for r in rows if r.get("status") != "ok"]
        ok = [r for r in rows if r.get("status") == "ok" and r.get("score") is not None]
        base = {
            "template": t.id, "asked": len(rows), "unreadable": len(unreadable),
            "unreadable_share": round(len(unreadable) / len(rows), 4) if rows else float("nan"),
            "no_score_tag": sum("<score>" not in (r.get("raw_reply") or "").lower() for r in ok)
            if t.kind == "argument" else "",
            "at_half": sum(float(r["score"]) == 0.5 for r in ok),
        }  # fmt: skip
        doc_y = [int(bool(labels[r["id"]].wrong)) for r in ok]
        out.append({**base, "level": "document", "n": len(ok), "n_wrong": sum(doc_y),
                    **_interval(doc_y, [float(r["score"]) for r in ok], [r["id"] for r in ok], n_boot),
                    "flags_right": "", "misses_wrong": ""})  # fmt: skip
        if t.kind == "argument":
            continue
        fy, fs, fd = [], [], []
        for r in ok:
            for name, (score, _) in (r.get("fields") or {}).items():
                w = truth.get(r["id"], {}).get(name)
                if w is None:
                    continue
                fy.append(int(w))
                fs.append(float(score))
                fd.append(r["id"])
        flags = np.asarray(fs) < FLAG_BELOW
        yy = np.asarray(fy, dtype=bool)
        out.append({**base, "level": "field", "n": len(fy), "n_wrong": int(yy.sum()), **_interval(fy, fs, fd, n_boot),
                    "flags_right": round(float(flags[~yy].mean()), 4) if (~yy).any() else float("nan"),
                    "misses_wrong": round(float((~flags[yy]).mean()), 4) if yy.any() else float("nan")})  # fmt: skip
    scores = [r for r in run.iter_rows("scores") if r.get("scorer") == cs.FAMILY and r["id"] in asked]
    for level in ("document", "field"):
        mine = [r for r in scores if (r["field"] == DOCUMENT) == (level == "document") and r.get("score") is not None]
        if level == "document":
            y = [int(bool(labels[r["id"]].wrong)) for r in mine]
        else:
            mine = [r for r in mine if truth.get(r["id"], {}).get(r["field"]) is not None]
            y = [int(bool(truth[r["id"]][r["field"]])) for r in mine]
        out.append({"template": "CONSTRUCT (all five)", "asked": len(asked), "unreadable": "", "unreadable_share": "",
                    "no_score_tag": "", "at_half": "", "level": level, "n": len(mine), "n_wrong": sum(y),
                    **_interval(y, [float(r["score"]) for r in mine], [r["id"] for r in mine], n_boot),
                    "flags_right": "", "misses_wrong": ""})  # fmt: skip
    return out


def write_parts(run: RunDir, *, n_boot: int = 1000) -> Path:
    """``metrics/construct_parts.csv`` and ``.md`` of the run."""
    path = run.path / "metrics" / TABLE
    write_table(parts_table(run, n_boot=n_boot), path, "CONSTRUCT's five templates, each on its own")
    return path.with_suffix(".csv")
