"""The notebooks: committed without outputs, and executed end to end (papermill) on the recorded runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
STALE = (
    "has not run yet",
    "have not run yet",
    "not judged yet",
    "judged so far",
    "in progress",
    "still running",
    "still being judged",
    "until those runs exist",
)


ANALYSIS = [
    "02_error_detection",
    "03_calibration",
    "04_positional_bias",
    "05_paper_figures",
    "06_decisions",
    "07_natural_errors",
]
"""The notebooks that read the recorded runs only (01 starts the embedded model)."""


def test_notebooks_are_committed_without_outputs_and_are_parameterised():
    assert [p.stem for p in NOTEBOOKS] == ["01_quickstart", *ANALYSIS]
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), path.name
        assert any("parameters" in c.get("metadata", {}).get("tags", []) for c in code), path.name


def test_notebooks_import_the_package_from_its_one_public_path():
    """A notebook is what a user copies from: it imports ``from construct_eval import ...`` (the
    public names of ``construct_eval.__all__``) and, for the study's own helpers,
    ``from construct_eval.studies import ...``; never another submodule, and no file by path."""
    import re

    import construct_eval

    for path in NOTEBOOKS:
        code = "\n".join(
            "".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"
        )
        assert not re.search(r"^\s*(from|import) construct_eval\.(?!studies\b)", code, flags=re.M), path.name
        assert "importlib" not in code and 'split(":"' not in code, path.name
        for names in re.findall(r"^from construct_eval import ([^\n]+)$", code, flags=re.M):
            for name in (n.strip() for n in names.split(",")):
                assert name in construct_eval.__all__, f"{path.name}: {name} is not public"


def _execute(name: str, tmp_path: Path, **params) -> dict:
    import papermill

    out = tmp_path / f"{name}.ipynb"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / f"{name}.ipynb"),
        str(out),
        parameters=params,
        kernel_name="python3",
        cwd=str(ROOT),
        progress_bar=False,
    )
    return json.loads(out.read_text())


def _figures_missing(nb: dict) -> list[int]:
    """The code cells that draw a figure for the reader (``plt.show()``) and show no image."""
    return [
        i
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code"
        and "plt.show()" in "".join(c["source"])
        and not any("image/png" in o.get("data", {}) for o in c.get("outputs", []))
    ]


@pytest.mark.parametrize("name", ANALYSIS)
def test_the_executed_notebooks_show_every_figure_they_draw(name):
    """``make reproduce`` executes the notebooks into results/notebooks/: a figure a cell draws is
    in its output (a non-interactive matplotlib backend would leave the cell empty)."""
    path = ROOT / "results" / "notebooks" / f"{name}.ipynb"
    assert not _figures_missing(json.loads(path.read_text())), f"{path.name}: cells with no figure"


@pytest.mark.slow
@pytest.mark.parametrize("name", ANALYSIS)
def test_analysis_notebooks_run_on_the_recorded_runs(name, tmp_path, monkeypatch):
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = _execute(name, tmp_path, runs_root=str(ROOT / "results" / "runs"), out_dir=str(tmp_path / "out"))
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert not _figures_missing(nb), f"{name}: cells that draw a figure and show none"
    # every recorded run is complete: nothing a reader sees may say a part is still to come
    shown = ["".join(c["source"]) if c["cell_type"] == "markdown" else "" for c in nb["cells"]] + [
        "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/markdown", ""))
        for c in nb["cells"]
        for o in c.get("outputs", [])
    ]
    stale = [p for p in STALE if any(p in text for text in shown)]
    assert not stale, f"{name} says a recorded part is still to come: {stale}"


@pytest.mark.slow
@pytest.mark.llm
def test_quickstart_judges_one_document_on_the_embedded_model(tmp_path):
    nb = _execute("01_quickstart", tmp_path)
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the answer's figure"
    shown = "".join("".join(o.get("data", {}).get("text/markdown", "")) for o in outputs)
    assert "rated the whole correct extraction" in shown and "| whole document |" in shown
    assert "__doc__" not in shown  # the internal field name is not what a reader sees


@pytest.mark.slow
def test_make_lab_starts_jupyterlab_on_loopback_listing_the_notebooks(tmp_path):
    """`make lab` (the README's way in): the server answers on 127.0.0.1 and lists every notebook."""
    import os
    import shutil
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = Path(__file__).resolve().parents[1]
    venv = Path(sys.executable).parent.parent
    if not (root / ".venv").exists() or venv.resolve() != (root / ".venv").resolve():
        pytest.skip("make lab runs the project's .venv; this test runs in another environment")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "JUPYTER_TOKEN": "construct-eval-test", "JUPYTER_RUNTIME_DIR": str(tmp_path)}
    printed = tmp_path / "stdout.txt"
    proc = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_PORT={port}"],
        cwd=root,
        env=env,
        stdout=printed.open("w"),
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/api/contents/notebooks?token=construct-eval-test"
        listing = None
        for _ in range(120):
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    listing = json.load(r)
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                time.sleep(1)
        assert listing is not None, "JupyterLab did not answer within 120 s"
        names = {c["name"] for c in listing["content"]}
        assert {p.name for p in NOTEBOOKS} <= names
        specs_url = f"http://127.0.0.1:{port}/api/kernelspecs?token=construct-eval-test"
        with urllib.request.urlopen(specs_url, timeout=5) as r:
            assert "construct-eval" in json.load(r)["kernelspecs"]
        # the URL to open, with the token given (Jupyter itself prints it as "...")
        assert f"http://127.0.0.1:{port}/lab?token=construct-eval-test" in printed.read_text()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
