"""The per-field Platt fit (``platt-per-field``) with its field indicators made by scikit-learn's
OneHotEncoder (the code before issue 32's change) against made from the fields' codes (now), in
one process on the same items: seconds per fit + predict, the ratio, and whether the design
matrices and the predictions are identical (they must be: the recorded tables may not move).

    PYTHONPATH=. python benchmarks/bench_per_field_platt.py [--items 20000,80000,320000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from construct_eval.stats.calibrators import PerFieldCalibrator


class EncoderPerField(PerFieldCalibrator):
    """The previous design matrix: OneHotEncoder(handle_unknown="ignore", drop="first")."""

    def fit(self, score, wrong, fields):  # type: ignore[no-untyped-def]
        from sklearn.preprocessing import OneHotEncoder

        self.encoder = OneHotEncoder(handle_unknown="ignore", drop="first").fit(np.asarray(fields)[:, None])
        return super().fit(score, wrong, fields)

    def _x(self, s, fields):  # type: ignore[no-untyped-def]
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Found unknown categories", category=UserWarning)
            onehot = self.encoder.transform(np.asarray(fields)[:, None]).toarray()
        return np.column_stack([(s - self.center) / self.scale, onehot])


def items(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """n field items of 15 fields: a 1-10 rating whose low values are wrong more often."""
    rng = np.random.default_rng(seed)
    fields = [f"invoice.line_items[].field_{i}" for i in rng.integers(0, 15, n)]
    s = rng.integers(1, 11, n).astype(float)
    y = (rng.random(n) < 0.05 + 0.03 * (10 - s)).astype(float)
    return s, y, fields


def timed(cls: type[PerFieldCalibrator], s, y, fields, repeat: int) -> tuple[float, np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    best, p, x = float("inf"), None, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        model = cls().fit(s, y, fields)
        p = model.predict(s, [*fields])  # the same fields as a new list (what out_of_fold passes)
        best = min(best, time.perf_counter() - t0)
        x = model._x(s[:2001], [*fields[:2000], "a field never seen"]) if len(fields) > 2000 else None
    return best, p, x  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", default="20000,80000,320000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    EncoderPerField().fit(*items(2000)[:2], items(2000)[2])  # imports outside the timings
    print(f"{'items':>8} | {'encoder s':>9} {'codes s':>8} {'ratio':>6} | identical X, predictions")
    for n in (int(k) for k in args.items.split(",")):
        s, y, fields = items(n)
        old, p_old, x_old = timed(EncoderPerField, s, y, fields, args.repeat)
        new, p_new, x_new = timed(PerFieldCalibrator, s, y, fields, args.repeat)
        same_x = x_old is None or np.array_equal(x_old, x_new)
        print(f"{n:>8,} | {old:>9.3f} {new:>8.3f} {old / new:>5.1f}x | {same_x}, {np.array_equal(p_old, p_new)}")


if __name__ == "__main__":
    main()
