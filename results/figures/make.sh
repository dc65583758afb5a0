#!/usr/bin/env bash
# The paper set: every recorded run with stored tables (results/runs/*, after analyse_all.sh),
# NeurIPS full text width, except the runs results/figures/left_out.txt names (each with why;
# figures.md and the manifest repeat them). No model calls; the manifest says which run files
# (hashes) it read.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -f results/figures/{,one_column/}*.{pdf,svg,png,csv,tex} results/figures/{,one_column/}{manifest.json,figures.md}
runs=(--runs-root results/runs --left-out results/figures/left_out.txt)
${PYTHON:-.venv/bin/python} -m construct_eval.cli figures "${runs[@]}" --out results/figures --venue neurips \
  --command-line "bash results/figures/make.sh"
# The main figures again at one column's width (ICML, 3.25 in), for a two-column paper.
${PYTHON:-.venv/bin/python} -m construct_eval.cli figures "${runs[@]}" --out results/figures/one_column --venue icml \
  --column half --main-only --command-line "bash results/figures/make.sh"
