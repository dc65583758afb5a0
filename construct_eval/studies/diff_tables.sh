#!/usr/bin/env bash
# The stored-numbers guard: every metrics table of every recorded run, made by the code of two
# commits from the same run files (this checkout's), compared cell by cell under issue 58's rule.
#
#   bash construct_eval/studies/diff_tables.sh [--exact] [--keep] BEFORE [AFTER]   # AFTER defaults to the working tree
#   bash construct_eval/studies/diff_tables.sh --help
#
# Each side is a temporary git worktree with one snapshot of this checkout's recorded run files, and
# analyse_all.sh run there with that side's code (no model calls). Then AFTER's findings.py
# writes FINDINGS.md, its cells and the README's findings block from each side's tables (one script,
# so a change in its prose is not a changed number), and diff_tables.py compares the two trees.
# The scripts are in construct_eval/studies/ (results/runs/ and results/findings.py before issue 56):
# each side runs its own from wherever its commit keeps them.
#
#   (default)  the tolerance rule: full-precision numbers within 1e-6 (Beta calibration 1e-4),
#              every printed cell identical, FINDINGS.md and the README block byte-identical;
#              a changed printed cell is an "unexplained" difference (see diff_tables.py --help)
#   --exact    the old rule: every CSV number within 1e-9 (relative), everything else as above
#   --keep     keep the two analysed trees (their path is printed) to look at what differs
#
# Exit 0 if the stored numbers stand, 1 if not (every difference is printed), 2 if the guard could
# not run (a usage error, or analyse_all.sh failed on a side). PYTHON and DATA_DIR as for analyse_all.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
PROJECT=$(pwd)
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
EXACT=()
KEEP=
ARGS=()
for arg in "$@"; do
  case $arg in
    -h|--help) usage; echo; echo "The rule, in full (diff_tables.py --help):"; "${PYTHON:-$PROJECT/.venv/bin/python}" -m construct_eval.studies.diff_tables --help; exit 0 ;;
    --exact) EXACT=(--exact) ;;
    --keep) KEEP=1 ;;
    -*) echo "unknown option $arg" >&2; usage >&2; exit 2 ;;
    *) ARGS+=("$arg") ;;
  esac
done
if [ ${#ARGS[@]} -lt 1 ] || [ ${#ARGS[@]} -gt 2 ]; then usage >&2; exit 2; fi
BEFORE=${ARGS[0]}
AFTER=${ARGS[1]:-}
PY=${PYTHON:-$PROJECT/.venv/bin/python}
DATA=${DATA_DIR:-$(cd ../shared/data/cleanlab 2>/dev/null && pwd || true)}
TMP=$(mktemp -d)
cleanup() {
  git worktree remove --force "$TMP/before" 2>/dev/null || true
  git worktree remove --force "$TMP/after" 2>/dev/null || true
  rm -rf "$TMP"
}
if [ -n "$KEEP" ]; then
  trap 'echo "the analysed trees: $TMP/before $TMP/after (git worktree remove --force each when done)"' EXIT
else
  trap cleanup EXIT
fi

script() {  # script TREE NAME: where TREE's commit keeps the study script NAME (before issue 56: under results/)
  local name=$2
  if [ "$name" = findings.py ] && [ -f "$1/construct_eval/studies/findings/__init__.py" ]; then
    echo "$1/construct_eval/studies/findings/__init__.py"  # a package since issue 78 (facts, templates)
  elif [ -f "$1/construct_eval/studies/$name" ]; then echo "$1/construct_eval/studies/$name"
  elif [ "$name" = findings.py ]; then echo "$1/results/findings.py"
  else echo "$1/results/runs/$name"; fi
}
side() {  # side NAME REV: a tree with REV's code (or the working tree's) and this checkout's run files
  local dir=$TMP/$1
  git worktree add -q --detach "$dir" "${2:-HEAD}" || { echo "no worktree for ${2:-HEAD}"; exit 2; }
  if [ -z "${2:-}" ]; then  # the working tree's code, uncommitted changes included
    rm -rf "$dir/construct_eval" && cp -r construct_eval "$dir/construct_eval"  # the study scripts with it
  fi
  cp -r "$TMP/snapshot/results/." "$dir/results/"
  # PYTHONPATH: the side's package (an older side's scripts under results/ run by path; python -m uses the cwd)
  (cd "$dir" && DATA_DIR="$DATA" PYTHON="$PY" PYTHONPATH="$dir" bash "$(script "$dir" analyse_all.sh)" > "$TMP/$1.log" 2>&1) \
    || { echo "analyse_all.sh failed on $1 (its log, $TMP/$1.log, is kept with --keep):"; tail -20 "$TMP/$1.log"; exit 2; }
}
findings() {  # findings NAME: FINDINGS.md, its cells and the README block from NAME's tables, by AFTER's findings.py
  local dir=$TMP/$1
  if (cd "$TMP/after" && PYTHONPATH="$TMP/after" "$PY" - "$(script "$TMP/after" findings.py)" "$dir") > "$TMP/$1.findings.log" 2>&1 <<'EOF'
import importlib
import importlib.util
import sys
from pathlib import Path

if sys.argv[1].endswith("/findings/__init__.py"):  # the package: imported from AFTER's tree (PYTHONPATH)
    module = importlib.import_module("construct_eval.studies.findings")
else:
    spec = importlib.util.spec_from_file_location("findings_after", sys.argv[1])  # by path: either layout
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
root = Path(sys.argv[2])
md, cells, block = module.build(root)
(root / "results/FINDINGS.md").write_text(md)
(root / "results/FINDINGS.cells.csv").write_text(cells)
readme = root / "README.md"
starts = getattr(module, "README_STARTS", None)  # the block's first line as any version wrote it
text = readme.read_text() if readme.is_file() else ""
if (starts.search(text) if starts else module.README_START in text):
    readme.write_text(module.replace_block(readme.read_text(), block))
EOF
  then return 0; fi
  # not written from this side's tables: compared as missing there, and the guard fails
  FINDINGS_FAILED=1
  echo "findings.py could not write FINDINGS from $1's tables (so they count as missing there):"
  tail -5 "$TMP/$1.findings.log"
  rm -f "$dir/results/FINDINGS.md" "$dir/results/FINDINGS.cells.csv" "$dir/README.md"
}
FINDINGS_FAILED=0
# one snapshot of the run files for both sides (a run being judged meanwhile must not differ)
for run in results/runs/*/ results/model_comparison/*/ results/tlm_anchor/*/; do
  [ -d "$run" ] || continue
  mkdir -p "$TMP/snapshot/$run"
  find "$run" -maxdepth 1 -type f \( -name '*.jsonl' -o -name '*.json' \) -exec cp {} "$TMP/snapshot/$run" \;
done
side before "$BEFORE"
side after "$AFTER"
if [ -f "$(script "$TMP/after" findings.py)" ]; then
  findings before
  findings after
else  # nothing writes them: the checkouts' committed copies would compare two commits, not two analyses
  echo "AFTER has no findings.py: FINDINGS.md and the README block not compared"
  for s in before after; do rm -f "$TMP/$s/results/FINDINGS.md" "$TMP/$s/results/FINDINGS.cells.csv" "$TMP/$s/README.md"; done
fi
status=0
"$PY" -m construct_eval.studies.diff_tables "${EXACT[@]}" "$TMP/before" "$TMP/after" || status=$?
if [ "$FINDINGS_FAILED" = 1 ] && [ "$status" = 0 ]; then
  echo "FINDINGS could not be written from every side's tables: the stored numbers are not shown to stand"
  status=1
fi
exit "$status"
