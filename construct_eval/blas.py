"""BLAS on one thread for work made of many small fits.

NumPy and SciPy call OpenBLAS (or MKL), whose thread pool wakes for every product and spins after
it. Calibration and the decision tables make thousands of tiny fits (Platt maps and logistic
combiners by L-BFGS-B, isotonic maps, bootstrap draws): nothing they multiply is large enough to
gain from a second thread, and on two busy cores the pool's spinning cost several times the fits'
own CPU while the numbers stayed the same (``benchmarks/bench_decisions.py``,
``benchmarks/bench_calibrate.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS (OpenBLAS, MKL: NumPy's and SciPy's own) on one thread, as a context or a decorator.
    SciPy's optimizers are imported first, so the limit reaches the BLAS they load; the limit is
    lifted on leaving, whatever the caller had before."""
    import scipy.optimize  # noqa: F401  (loads SciPy's own OpenBLAS before the limit is set)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
