"""A spending limit for a stage's calls: never start a call that could take the run over it.

Each call reserves its worst case (its input tokens at the estimate's upper bound, and its
``max_tokens`` of output) before it is sent; when it returns, the reservation is replaced by
what the reply's usage says it cost (a cached reply costs nothing). A call that does not fit
beside what is spent and reserved is not sent: the stage stops with :class:`BudgetReached`,
after the calls in flight have finished and been written, so a rerun with a larger limit
resumes with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass


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
