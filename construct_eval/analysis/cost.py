"""What a run's model calls cost: one ledger row per source (generation, generator samples, each
judge configuration, reflection, verdicts): calls, calls answered by the response cache, prompt
and completion tokens from the replies' usage, and money at the prices given.

A judge call that rates several fields at once is counted once (rows sharing a ``call_id``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from construct_eval.data.runs import RunDir


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
    """The ledger of ``run`` (rows with no calls left out), the last row the total."""
    out = []
    outputs = [r for r in run.iter_rows("outputs") if r.get("usage") is not None or r.get("latency_s") is not None]
    out.append(_ledger("generation", outputs, price_in, price_out))
    out.append(_ledger("generator samples", run.iter_rows("samples"), price_in, price_out))
    judge_calls: dict[str, dict[str, Mapping[str, Any]]] = {}
    for r in run.iter_rows("judgments"):
        label = f"judge {r.get('mode')} [{r.get('variant') or 'default'}] {r.get('constrained') or ''} {r.get('model') or ''}"
        judge_calls.setdefault(label.strip(), {})[r.get("call_id") or r.get("key")] = r
    for label, calls in sorted(judge_calls.items()):
        out.append(_ledger(label, calls.values(), price_in, price_out))
    out.append(_ledger("reflection", run.iter_rows("reflections"), price_in, price_out))
    out.append(_ledger("verdicts", run.iter_rows("verdicts"), price_in, price_out))
    out = [r for r in out if r["calls"]]
    total: dict[str, Any] = {"source": "total"}
    for key in ("calls", "cached", "prompt_tokens", "completion_tokens", "cost"):
        if all(key in r for r in out) and out:
            total[key] = round(sum(r[key] for r in out), 6) if key == "cost" else sum(r[key] for r in out)
    return [*out, total]
