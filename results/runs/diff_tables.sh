#!/usr/bin/env bash
# The restructure guard: every metrics table of every recorded run, made by the code of two
# commits from the same run files (this checkout's), compared cell by cell.
#
#   bash results/runs/diff_tables.sh BEFORE [AFTER]      # AFTER defaults to the working tree
#
# Each side is a temporary git worktree with one snapshot of this checkout's recorded run files, and
# analyse_all.sh run there with that side's code (no model calls). Exit 1 if a number moved.
set -euo pipefail
cd "$(dirname "$0")/../.."
PROJECT=$(pwd)
BEFORE=${1:?usage: diff_tables.sh BEFORE [AFTER]}
AFTER=${2:-}
PY=${PYTHON:-$PROJECT/.venv/bin/python}
DATA=${DATA_DIR:-$(cd ../shared/data/cleanlab 2>/dev/null && pwd || true)}
TMP=$(mktemp -d)
trap 'git worktree remove --force "$TMP/before" 2>/dev/null; git worktree remove --force "$TMP/after" 2>/dev/null; rm -rf "$TMP"' EXIT

side() {  # side NAME REV: a tree with REV's code (or the working tree's) and this checkout's run files
  local dir=$TMP/$1
  git worktree add -q --detach "$dir" "${2:-HEAD}"
  if [ -z "${2:-}" ]; then  # the working tree's code, uncommitted changes included
    rm -rf "$dir/construct_eval" && cp -r construct_eval "$dir/construct_eval"
    cp results/runs/analyse_all.sh "$dir/results/runs/analyse_all.sh"
  fi
  cp -r "$TMP/snapshot/results/." "$dir/results/"
  (cd "$dir" && DATA_DIR="$DATA" PYTHON="$PY" bash results/runs/analyse_all.sh > "$TMP/$1.log" 2>&1) \
    || { echo "analyse_all.sh failed on $1: see $TMP/$1.log"; tail -20 "$TMP/$1.log"; exit 1; }
}
# one snapshot of the run files for both sides (a run being judged meanwhile must not differ)
for run in results/runs/*/ results/model_comparison/*/ results/tlm_anchor/*/; do
  mkdir -p "$TMP/snapshot/$run"
  find "$run" -maxdepth 1 -type f \( -name '*.jsonl' -o -name '*.json' \) -exec cp {} "$TMP/snapshot/$run" \;
done
side before "$BEFORE"
side after "$AFTER"
"$PY" results/runs/diff_tables.py "$TMP/before" "$TMP/after"
