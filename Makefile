# construct-eval: two commands on a fresh machine.
#   make demo   set up .venv and run the demo: a few documents live on the embedded local model,
#               then the recorded study's answers from its stored tables (a few minutes)
#   make test   set up .venv (pinned versions) and run every test
SHELL := /bin/bash
# Python 3.11.5 to 3.13 (pyproject's requires-python); the first of these found is used.
PYTHON ?= $(shell for p in python3.11 python3.12 python3.13; do command -v $$p > /dev/null && { echo $$p; break; }; done)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Portable CPU build of llama.cpp (no -march=native), so the pip wheel cache is reusable.
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
EXTRAS := local,hub,tables,notebooks,figures,dev
# netcal imports torch. PyTorch's CPU index serves a CPU build (about 200 MB); the public
# package index serves, on Linux, a CUDA build that pulls about 18 nvidia packages (several
# GB), pinned in requirements-torch-cuda.lock. make uses the CPU index when it answers.
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
LOCKS := -c requirements.lock -c requirements-torch-cuda.lock

.PHONY: venv test test-fast lint reproduce demo demo-record demo-full demo-full-record bench notebooks lab lock clean

venv: $(STAMP)

$(STAMP): pyproject.toml requirements.lock requirements-torch-cuda.lock
	@test -n "$(PYTHON)" || { echo "error: no python3.11, python3.12 or python3.13 on PATH (construct-eval needs 3.11.5 to 3.13); set PYTHON=/path/to/python"; exit 1; }
	@$(PYTHON) -c 'import sys; ok = (3, 11, 5) <= sys.version_info[:3] < (3, 14); sys.exit(0 if ok else f"error: {sys.executable} is Python {sys.version.split()[0]}; construct-eval needs 3.11.5 to 3.13 (set PYTHON=...)")'
	@command -v cc > /dev/null || command -v gcc > /dev/null || { echo "error: no C compiler (cc or gcc): llama-cpp-python is compiled from source; install one (Debian/Ubuntu: apt install build-essential; macOS: xcode-select --install)"; exit 1; }
	@command -v c++ > /dev/null || command -v g++ > /dev/null || { echo "error: no C++ compiler (c++ or g++): llama-cpp-python is compiled from source; install one (Debian/Ubuntu: apt install build-essential)"; exit 1; }
	@command -v cmake > /dev/null || echo "note: no cmake on PATH: the llama-cpp-python build fetches cmake from the package index"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade "pip==24.3.1"
	@echo "installing pinned dependencies (the first build of llama-cpp-python compiles for ~10 minutes)"
	@if curl -fsS -o /dev/null --max-time 5 "$(TORCH_CPU_INDEX)/torch/" 2> /dev/null; then \
	  echo "PyTorch's CPU index answers: torch comes from it (a CPU build, no CUDA packages)"; \
	  idx="--extra-index-url $(TORCH_CPU_INDEX)"; \
	else \
	  echo "PyTorch's CPU index does not answer: torch comes from pip's own sources (the public index serves a CUDA build on Linux, pinned; a local CPU wheel in pip's find-links wins)"; \
	  idx=""; \
	fi; \
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install --progress-bar off $$idx $(LOCKS) -e ".[$(EXTRAS)]"
	touch $(STAMP)

test: venv lint
	$(PY) -m pytest -q --durations=20

test-fast: venv
	$(PY) -m pytest -q -m "not slow"

lint: venv
	$(VENV)/bin/ruff check construct_eval tests benchmarks results/tlm_probe
	$(VENV)/bin/ruff format --check construct_eval tests benchmarks results/tlm_probe
	$(VENV)/bin/lint-imports   # the import layers of pyproject.toml [tool.importlinter]

# Every stored table, the findings, the paper figures and notebooks 02-07 remade from the stored
# run files (no model call), each step timed, then checked against what is committed.
reproduce: venv
	bash construct_eval/studies/reproduce.sh

# The demo runs into runs/demo (ignored by git) and ends comparing itself with the recorded
# demo; `make demo-record` replaces the recorded one in results/demo on purpose. The full demo
# (the whole pipeline on the embedded model's own runs, about an hour on 2 cores) runs into
# runs/demo-full and compares itself with results/demo-full (`make demo-full-record`).
demo: venv
	$(PY) -m construct_eval.demo --out runs/demo

demo-record: venv
	$(PY) -m construct_eval.demo --out results/demo --command "make demo-record"

demo-full: venv
	$(PY) -m construct_eval.demo --full --out runs/demo-full

demo-full-record: venv
	$(PY) -m construct_eval.demo --full --out results/demo-full --command "make demo-full-record"

bench: venv
	$(PY) benchmarks/bench_judge_throughput.py
	$(PY) benchmarks/bench_metrics.py
	$(PY) benchmarks/bench_prefix_cache.py     # the embedded model: ~4 minutes
	$(PY) benchmarks/bench_local_server.py     # stock vs fixed llama.cpp server: ~5 minutes
	$(PY) benchmarks/bench_decisions.py        # the decision tables, old code against this tree: ~15 minutes
	@echo "bench_grouping.py needs a running 'construct-eval serve' and a run folder: see its docstring"

# Execute every notebook (papermill) into results/notebooks/, figures beside them; each notebook's
# folder there is emptied first, so nothing an earlier version wrote is left behind. Each notebook's
# own out_dir is that folder, so no parameter is passed (papermill would add a cell repeating it).
NOTEBOOKS := 02_error_detection 03_calibration 04_positional_bias 05_paper_figures 06_decisions 07_natural_errors
notebooks: venv
	mkdir -p results/notebooks
	$(PY) -m papermill -k python3 --log-level WARNING notebooks/01_quickstart.ipynb results/notebooks/01_quickstart.ipynb
	for nb in $(NOTEBOOKS); do \
	  rm -rf results/notebooks/$$nb; \
	  $(PY) -m papermill -k python3 --log-level WARNING notebooks/$$nb.ipynb results/notebooks/$$nb.ipynb || exit 1; \
	done

# JupyterLab from the project's environment, its kernel registered inside .venv, bound to
# 127.0.0.1 (open the URL with the token it prints; JUPYTER_TOKEN sets one). In a container
# running as root it adds --allow-root; LAB_ARGS passes more options.
LAB_PORT ?= 8888
lab: venv
	$(PY) -m ipykernel install --sys-prefix --name construct-eval --display-name "construct-eval (.venv)" > /dev/null
	@# Jupyter prints a token it was given as "...": say the URL to open ourselves.
	@if [ -n "$$JUPYTER_TOKEN" ]; then echo "JupyterLab: open http://127.0.0.1:$(LAB_PORT)/lab?token=$$JUPYTER_TOKEN"; fi
	$(VENV)/bin/jupyter lab --ip 127.0.0.1 --port $(LAB_PORT) --no-browser --ServerApp.root_dir="$(CURDIR)" \
	  $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS) notebooks/01_quickstart.ipynb

# Regenerate the lock from the current venv (after changing pyproject.toml on purpose).
# Local version labels (torch's +cpu) are dropped: the public index does not serve them, and
# a pin without one still admits the CPU build where make finds it.
lock:
	$(PY) -m pip freeze --exclude-editable | grep -v '^construct-eval' | sed -E 's/^([^=]+==[^+]+)[+].*/\1/' > requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
