# The study scripts' shared set-up: sourced by judge_study.sh, natural_pilots.sh, natural_study.sh
# and near_miss_study.sh right after their `set -uo pipefail`. It sets
#   CODE     the worktree these scripts live in (a pinned one): its code is what runs (PYTHONPATH,
#            and the working folder, which python puts first on sys.path)
#   PROJECT  where the run folders are written (env PROJECT; default CODE)
#   PY       the interpreter (env PYTHON; default $PROJECT/.venv/bin/python)
#   DATA     the benchmark data (env DATA_DIR; default $PROJECT/../shared/data/cleanlab)
#   PORT     the local judge server's port (env PORT; default 8093)
#   CE       the command line, run with PY
# and defines step (a dated log line) and require_pinned_code (fails unless construct_eval is
# imported from CODE). Each script keeps its own other settings, its run folder R and its timed.
CODE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PROJECT=${PROJECT:-$CODE}
PY=${PYTHON:-$PROJECT/.venv/bin/python}
export PYTHONPATH=$CODE
cd "$CODE"
DATA=${DATA_DIR:-$(cd "$PROJECT/../shared/data/cleanlab" 2>/dev/null && pwd)}
PORT=${PORT:-8093}
CE="$PY -m construct_eval.cli"
step() { echo "== $(date -u +%FT%TZ) $*"; }
require_pinned_code() {
  "$PY" -c "import construct_eval, sys; sys.exit(0 if construct_eval.__file__.startswith('$CODE') else 'construct_eval is not imported from the pinned worktree')"
}
