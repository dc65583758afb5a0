"""A spending limit for a stage's calls: never start a call that could take the run over it.

Each call reserves its worst case (its input tokens at the estimate's upper bound, and its
``max_tokens`` of output) before it is sent; when it returns, the reservation is replaced by
what the reply's usage says it cost (a cached reply costs nothing). A call that does not fit
beside what is spent and reserved is not sent: the stage stops with :class:`BudgetReached`,
after the calls in flight have finished and been written, so a rerun with a larger limit
resumes with the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from construct_eval.llm.client import ChatRequest, LLMClient, cache_key, request_kwargs
from construct_eval.llm.prompt_size import CHARS_PER_TOKEN, MESSAGE_OVERHEAD_TOKENS, estimate_tokens


class BudgetReached(RuntimeError):
    """The next call could take the run over its spending limit; nothing more was sent."""


@dataclass
class Budget:
    max_cost: float
    price_in: float  # per million input tokens
    price_out: float  # per million output tokens
    spent: float = 0.0
    reserved: float = 0.0
    calls: int = 0

    def cost(self, tokens_in: float, tokens_out: float) -> float:
        return tokens_in * self.price_in / 1e6 + tokens_out * self.price_out / 1e6

    def reserve(self, worst: float) -> None:
        """Hold ``worst`` for a call about to be sent, or raise :class:`BudgetReached`."""
        if self.spent + self.reserved + worst > self.max_cost:
            raise BudgetReached(
                f"the next call could cost up to {worst:.4f}: with {self.spent:.4f} spent and"
                f" {self.reserved:.4f} held for calls in flight that would pass the limit of {self.max_cost:g};"
                " everything answered is written, rerun with a larger --max-cost to go on"
            )
        self.reserved += worst

    def settle(self, worst: float, actual: float) -> None:
        """A call returned: release its reservation, count what it cost."""
        self.reserved -= worst
        self.spent += actual
        self.calls += 1


LOWEST_ESTIMATE_RATIO = 0.78
"""The estimate was as low as 0.79 of the exact token count (PII prompts, SmolLM2's tokenizer;
results/benchmarks/token_estimate.txt, 0.79-1.06 over four datasets and two tokenizers): the
worst-case cost divides input tokens by this, so it is an upper bound there too."""


@dataclass(frozen=True)
class CostEstimate:
    """What the planned calls would cost, before any is made."""

    calls: int  # planned calls not yet done and not in the response cache
    cached: int  # planned calls the response cache would answer (free)
    input_tokens: int  # estimated (characters / CHARS_PER_TOKEN, plus each message's template overhead)
    output_tokens_max: int  # every call writing its max_tokens: the worst case
    price_in: float | None = None  # per million tokens
    price_out: float | None = None
    discount: float = 0.0  # e.g. 0.5 for a provider's batch price
    counted_by: str | None = None  # the tokenizer that counted the input exactly (None: estimated)

    @property
    def cost_max(self) -> float | None:
        if self.price_in is None or self.price_out is None:
            return None
        high_in = self.input_tokens if self.counted_by else self.input_tokens / LOWEST_ESTIMATE_RATIO
        full = high_in * self.price_in / 1e6 + self.output_tokens_max * self.price_out / 1e6
        return full * (1 - self.discount)

    def lines(self) -> list[str]:
        out = [
            f"calls to make: {self.calls} (and {self.cached} answered by the response cache)",
            (
                f"input tokens: {self.input_tokens} (counted by {self.counted_by}'s tokenizer"
                f" + {MESSAGE_OVERHEAD_TOKENS} per message for the chat template)"
                if self.counted_by
                else f"input tokens: about {self.input_tokens} (estimated: {CHARS_PER_TOKEN:g} characters per token"
                f" + {MESSAGE_OVERHEAD_TOKENS} per message; measured 0.79-1.06x the exact counts),"
                f" at most {round(self.input_tokens / LOWEST_ESTIMATE_RATIO)}"
            ),
            f"output tokens: at most {self.output_tokens_max} (every call writing its max_tokens)",
        ]
        if self.cost_max is not None:
            disc = f", {self.discount:.0%} discount" if self.discount else ""
            out.append(
                f"cost: at most {self.cost_max:.4f} at {self.price_in:g} in / {self.price_out:g} out per million"
                f" tokens{disc} (input at its upper bound, every call writing max_tokens)"
            )
        return out


def worst_case_tokens(req: ChatRequest) -> tuple[float, int]:
    """A call's input tokens at the estimate's upper bound, and its output at max_tokens."""
    tokens_in = sum(estimate_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD_TOKENS for m in req.messages)
    return tokens_in / LOWEST_ESTIMATE_RATIO, req.max_tokens or 0


def estimate_requests(
    client: LLMClient,
    requests: Iterable[ChatRequest],
    *,
    price_in: float | None = None,
    price_out: float | None = None,
    discount: float = 0.0,
    count: Callable[[str], int] | None = None,
    counted_by: str | None = None,
) -> CostEstimate:
    """Tokens and money for ``requests`` (no model call; a cached reply costs nothing). ``count``:
    the model's own tokenizer, where one works offline (``counted_by`` names it)."""
    count = count or estimate_tokens
    calls = cached = tokens_in = tokens_out = 0
    for req in requests:
        if client.cache is not None and client.cache.get(
            cache_key(client.endpoint, request_kwargs(client.endpoint, req))
        ):
            cached += 1
            continue
        calls += 1
        tokens_in += sum(count(str(m.get("content") or "")) + MESSAGE_OVERHEAD_TOKENS for m in req.messages)
        tokens_out += req.max_tokens or 0
    return CostEstimate(calls, cached, tokens_in, tokens_out, price_in, price_out, discount, counted_by)
