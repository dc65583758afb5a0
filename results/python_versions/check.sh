#!/usr/bin/env bash
# `make test` under another Python, in its own venv, with its evidence kept here:
#   bash results/python_versions/check.sh /root/.pyenv/versions/3.12.1/bin/python
# writes results/python_versions/<X.Y>/{python.txt,freeze.txt,pytest.txt,time.txt}.
# Slow (a llama-cpp-python build and, off PyTorch's CPU index, a CUDA torch download): run it
# by hand or in a slow job, not in CI.
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${1:?path to a python interpreter}
V=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
OUT=results/python_versions/$V
VENV=.venv-$V
mkdir -p "$OUT"
"$PY" -VV > "$OUT/python.txt"
t0=$SECONDS
make test PYTHON="$PY" VENV="$VENV" > "$OUT/make-test.log" 2>&1
rc=$?
echo "make test PYTHON=$PY VENV=$VENV: exit $rc in $((SECONDS - t0)) s ($(date -u +%FT%TZ))" > "$OUT/time.txt"
"$VENV/bin/python" -m pip freeze --exclude-editable > "$OUT/freeze.txt" 2>/dev/null
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/make-test.log" | tail -40 > "$OUT/pytest.txt"
exit $rc
