"""What a run's model calls cost: one ledger row per source (generation, then each registered
scorer's calls: generator samples, each judge configuration, reflection, verdicts): calls, calls answered by the response cache, prompt
and completion tokens from the replies' usage, and money at the prices given.

A judge call that rates several fields at once is counted once (rows sharing a ``call_id``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.scorer_registry import cost_sources


def _usage(row: Mapping[str, Any]) -> tuple[int, int]:
    usage = row.get("usage") or {}
    prompt = row.get("prompt_tokens", usage.get("prompt_tokens")) or 0
    completion = row.get("completion_tokens", usage.get("completion_tokens")) or 0
    return int(prompt), int(completion)


def _ledger(
    source: str, rows: Iterable[Mapping[str, Any]], price_in: float | None, price_out: float | None
) -> dict[str, Any]:
    calls = cached = tokens_in = tokens_out = 0
    for r in rows:
        calls += 1
        if r.get("cached"):
            cached += 1
            continue  # a cached reply is not paid again
        p, c = _usage(r)
        tokens_in += p
        tokens_out += c
    row: dict[str, Any] = {"source": source, "calls": calls, "cached": cached,
                           "prompt_tokens": tokens_in, "completion_tokens": tokens_out}  # fmt: skip
    if price_in is not None and price_out is not None:
        row["cost"] = round(tokens_in * price_in / 1e6 + tokens_out * price_out / 1e6, 6)
    return row


def cost_ledger(run: RunDir, *, price_in: float | None = None, price_out: float | None = None) -> list[dict[str, Any]]:
    """The ledger of ``run`` (rows with no calls left out), the last row the total.

    Its sources after generation are the scorer registry's (:func:`construct_eval.scorer_registry.cost_sources`):
    each declared scorer's run file of model calls, one row per file, or per judge configuration
    for the judge's judgments."""
    out = []
    outputs = [r for r in run.iter_rows("outputs") if r.get("usage") is not None or r.get("latency_s") is not None]
    out.append(_ledger("generation", outputs, price_in, price_out))
    for file, label, per_configuration in cost_sources():
        if not per_configuration:
            out.append(_ledger(label, run.iter_rows(file), price_in, price_out))
            continue
        calls: dict[str, dict[str, Mapping[str, Any]]] = {}
        for r in run.iter_rows(file):
            config = f"{label} {r.get('mode')} [{r.get('variant') or 'default'}] {r.get('constrained') or ''} {r.get('model') or ''}"
            calls.setdefault(config.strip(), {})[r.get("call_id") or r.get("key")] = r
        for config, rows in sorted(calls.items()):
            out.append(_ledger(config, rows.values(), price_in, price_out))
    out = [r for r in out if r["calls"]]
    total: dict[str, Any] = {"source": "total"}
    for key in ("calls", "cached", "prompt_tokens", "completion_tokens", "cost"):
        if all(key in r for r in out) and out:
            total[key] = round(sum(r[key] for r in out), 6) if key == "cost" else sum(r[key] for r in out)
    return [*out, total]
