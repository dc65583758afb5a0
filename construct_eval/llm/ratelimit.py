"""Adaptive concurrency for rate-limited endpoints: as many calls in flight as the provider
allows, without a hand-tuned ``--concurrency``.

Additive increase, multiplicative decrease (the way TCP finds a link's capacity): every
answered call raises the limit by 1/limit (about one more call in flight per round trip), a
429 halves it. The provider's own signals go first: ``Retry-After`` (or ``retry-after-ms``)
pauses every new call until then, and ``x-ratelimit-limit-requests`` /
``x-ratelimit-remaining-requests`` / ``x-ratelimit-reset-requests``, as OpenAI-style APIs
send them (reset = the time until the window is full again), give the provider's refill rate
((limit - remaining) / reset): new calls are then paced by a local copy of the provider's
bucket at that rate, so few calls are sent only to be refused, and a 429 (an overshoot of the
copy) eases the limit instead of halving it.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str | None) -> float | None:
    """Seconds in ``"1s"``, ``"6m0s"``, ``"250ms"`` or a plain number (the reset headers' forms)."""
    if text is None:
        return None
    text = str(text).strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(a + b for a, b in parts) != text.replace(" ", ""):
        return None
    return sum(float(a) * _UNIT[b] for a, b in parts)


@dataclass
class AdaptiveLimiter:
    """Calls in flight bounded by a limit that follows the endpoint's answers."""

    initial: int = 4
    minimum: int = 1
    maximum: int = 256
    decrease: float = 0.5  # on a 429, when the provider sends no x-ratelimit headers
    decrease_with_headers: float = 0.85  # on a 429 when it does: the headers steer, a 429 is overshoot
    ease: float = 0.95  # on an answer that used the window's last request
    tight_share: float = 0.25  # remaining below this share of the window: stop increasing
    limit: float = field(init=False)
    in_flight: int = field(default=0, init=False)
    paused_until: float = field(default=0.0, init=False)
    peak: float = field(default=0.0, init=False)
    decreases: int = field(default=0, init=False)
    headers_seen: bool = field(default=False, init=False)
    rate: float | None = field(default=None, init=False)  # the provider's refill, requests per second
    window: float = field(default=0.0, init=False)  # the provider's bucket size (its limit)
    tokens: float = field(default=0.0, init=False)  # the local copy of its bucket
    stamp: float = field(default=0.0, init=False)
    pace: float = 0.98  # pace at this share of the provider's rate

    def __post_init__(self) -> None:
        self.limit = float(max(self.minimum, min(self.initial, self.maximum)))
        self.peak = self.limit
        self._changed: asyncio.Condition | None = None
        self._turn: asyncio.Lock | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Wait for room under the limit and for any pause to end; hold one place meanwhile."""
        cond = self._condition()
        if self._turn is None:
            self._turn = asyncio.Lock()
        # one waiter at a time, in arrival order, checks for room: thousands of queued calls
        # must not all wake on every answer (that costs more CPU than the calls themselves)
        async with self._turn, cond:
            while True:
                now = time.monotonic()
                wait = self.paused_until - now
                if wait <= 0 and self.in_flight < int(self.limit):
                    wait = self._paced(now)
                    if wait <= 0:
                        break
                with suppress(TimeoutError):
                    await asyncio.wait_for(cond.wait(), timeout=wait if wait > 0 else None)
            self.in_flight += 1
        try:
            yield
        finally:
            async with cond:
                self.in_flight -= 1
                cond.notify_all()

    def _paced(self, now: float) -> float:
        """0 and a token taken when the local bucket has one; else the seconds until it will."""
        if self.rate is None:
            return 0.0
        rate = self.rate * self.pace
        self.tokens = min(self.window, self.tokens + (now - self.stamp) * rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / rate

    def _pause(self, seconds: float) -> None:
        self.paused_until = max(self.paused_until, time.monotonic() + seconds)

    def _read_window(self, headers: Mapping[str, str]) -> bool:
        """Read the x-ratelimit headers; True when the window is nearly used up (hold the limit).

        With nothing left, new calls wait for one request's worth of refill: the time to full
        reset divided by what is missing (the headers' meaning at OpenAI-style providers).
        """
        tight = False
        for kind in ("requests", "tokens"):
            remaining = headers.get(f"x-ratelimit-remaining-{kind}")
            limit = headers.get(f"x-ratelimit-limit-{kind}")
            reset = parse_duration(headers.get(f"x-ratelimit-reset-{kind}"))
            if remaining is None or reset is None:
                continue
            self.headers_seen = True
            try:
                left = float(remaining)
                size = float(limit) if limit is not None else None
            except ValueError:
                continue
            if size and left < size * self.tight_share:
                tight = True
            if kind == "requests" and size and reset > 0 and size > left:
                rate = (size - left) / reset
                if self.rate is None:  # first sight of the provider's bucket: start the local copy
                    self.tokens, self.stamp = min(size, max(left, 0.0)), time.monotonic()
                self.rate = rate if self.rate is None else 0.8 * self.rate + 0.2 * rate
                self.window = size
            if left <= 0:
                missing = (size - left) if size and size > left else 1.0
                self._pause(reset / missing)
        return tight

    async def _wake(self) -> None:
        cond = self._condition()
        async with cond:
            cond.notify_all()

    async def answered(self, headers: Mapping[str, str] | None = None) -> None:
        """A call got its reply: one more place per round trip (additive increase), unless the
        provider's headers say its window is nearly used up (then hold; at zero, ease off)."""
        tight = self._read_window(headers) if headers else False
        if not tight:
            self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
        elif headers and any(headers.get(f"x-ratelimit-remaining-{k}") in ("0", "0.0") for k in ("requests", "tokens")):
            self.limit = max(float(self.minimum), self.limit * self.ease)
        self.peak = max(self.peak, self.limit)
        await self._wake()

    async def refused(self, retry_after: float | None, headers: Mapping[str, str] | None = None) -> None:
        """A 429: halve the limit (multiplicative decrease) and pause for Retry-After if given."""
        factor = self.decrease_with_headers if self.headers_seen else self.decrease
        self.limit = max(float(self.minimum), self.limit * factor)
        self.decreases += 1
        if retry_after is not None:
            self._pause(retry_after)
        if self.rate is not None:
            self.tokens = 0.0  # the copy ran ahead of the provider's bucket
        await self._wake()
