"""The notebooks: committed without outputs, and executed end to end (papermill) on the recorded runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_notebooks_are_committed_without_outputs_and_are_parameterised():
    assert [p.stem for p in NOTEBOOKS] == [
        "01_quickstart",
        "02_error_detection",
        "03_calibration",
        "04_positional_bias",
        "05_paper_figures",
    ]
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), path.name
        assert any("parameters" in c.get("metadata", {}).get("tags", []) for c in code), path.name


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


@pytest.mark.slow
@pytest.mark.parametrize("name", ["02_error_detection", "03_calibration", "04_positional_bias", "05_paper_figures"])
def test_analysis_notebooks_run_on_the_recorded_runs(name, tmp_path):
    nb = _execute(name, tmp_path, runs_root=str(ROOT / "results" / "runs"), out_dir=str(tmp_path / "out"))
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.slow
@pytest.mark.llm
def test_quickstart_judges_one_document_on_the_embedded_model(tmp_path):
    nb = _execute("01_quickstart", tmp_path)
    text = json.dumps(nb)
    assert "unscored:" in text and "__doc__" in text
