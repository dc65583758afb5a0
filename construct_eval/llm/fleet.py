"""Several replicas of one model behind one client: each call goes to the replica with the
fewest calls in flight, except that the calls of one document go to the replica that served its
first call (its prompt cache already holds the document: the package's prompt layout makes a
document's calls share a prefix). A replica that keeps failing is set aside for a while and its
calls retried on the others.

Resume and cache keys do not name the replica (they name the endpoint's identity, the first
URL's or ``--endpoint-id``), so the replicas must serve the same model and configuration; the
judgment rows record which replica answered.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Fleet:
    urls: Sequence[str]
    set_aside_after: int = 3  # consecutive failures
    set_aside_s: float = 30.0
    affinity: bool = True
    in_flight: list[int] = field(init=False)
    failures: list[int] = field(init=False)
    aside_until: list[float] = field(init=False)
    served: list[int] = field(init=False)
    _home: dict[str, int] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        n = len(self.urls)
        if not n:
            raise ValueError("a fleet needs at least one URL")
        self.in_flight, self.failures, self.aside_until, self.served = [0] * n, [0] * n, [0.0] * n, [0] * n

    def pick(self, key: str | None = None, exclude: Sequence[int] = ()) -> int:
        """The replica for a call: its document's replica if it has one and it is usable, else the
        least loaded usable one (every replica set aside or excluded: the least loaded of all)."""
        now = time.monotonic()
        usable = [i for i in range(len(self.urls)) if i not in exclude and now >= self.aside_until[i]]
        if not usable:
            usable = [i for i in range(len(self.urls)) if i not in exclude] or list(range(len(self.urls)))
        if self.affinity and key is not None and self._home.get(key) in usable:
            return self._home[key]
        chosen = min(usable, key=lambda i: (self.in_flight[i], i))
        if self.affinity and key is not None:
            self._home[key] = chosen
        return chosen

    def started(self, i: int) -> None:
        self.in_flight[i] += 1

    def finished(self, i: int, ok: bool) -> None:
        self.in_flight[i] -= 1
        if ok:
            self.failures[i] = 0
            self.served[i] += 1
            return
        self.failures[i] += 1
        if self.failures[i] >= self.set_aside_after:
            self.aside_until[i] = time.monotonic() + self.set_aside_s
            self.failures[i] = 0
