"""Paper figures: drawn from stored tables, in a venue's size, with embeddable TrueType fonts."""

from __future__ import annotations

import csv

import numpy as np
import pytest

pytest.importorskip("tueplots", reason="tueplots is the figures extra (make venv installs it)")

from construct_eval.cli import main
from construct_eval.figures import OKABE_ITO, colour, read_detection, venue_style
from construct_eval.runs import RunDir


@pytest.fixture
def evaluated_runs(tmp_path):
    runs = []
    for seed in (0, 1):
        run_dir = tmp_path / f"synthetic-{seed}"
        assert (
            main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "40", "--error-seed", str(seed)])
            == 0
        )
        assert main(["label", "--run", str(run_dir)]) == 0
        run = RunDir(run_dir)
        rng = np.random.default_rng(seed)
        labels = {r["id"]: r for r in run.read("labels")}
        rows = []
        for doc_id, lab in labels.items():
            wrong = any(f["wrong"] for f in lab["fields"])
            rows.append(
                {"id": doc_id, "scorer": "token_logprob", "field": "__doc__", "score": float(rng.random() - wrong)}
            )
            rows.append({"id": doc_id, "scorer": "reflection", "field": "__doc__", "score": float(rng.random())})
        run.append("scores", rows)
        assert main(["evaluate", "--run", str(run_dir), "--n-boot", "100"]) == 0
        runs.append(run_dir)
    return runs


def test_figures_command_writes_pdf_svg_png_with_truetype_fonts(evaluated_runs, tmp_path):
    pypdf = pytest.importorskip("pypdf", reason="pypdf is a dev dependency (make venv installs it)")
    from PIL import Image

    out = tmp_path / "figs"
    assert main(["figures", "--runs", *map(str, evaluated_runs), "--out", str(out), "--venue", "icml"]) == 0
    pdf = out / "forest_auroc_document.pdf"
    assert pdf.exists() and (out / "forest_auroc_document.svg").exists()
    with Image.open(out / "forest_auroc_document.png") as img:
        assert round(img.info["dpi"][0]) == 300
    reader = pypdf.PdfReader(pdf)
    page = reader.pages[0]
    width_in = float(page.mediabox.width) / 72
    assert width_in == pytest.approx(6.75, abs=0.05)  # ICML's full text width
    fonts = {}
    for font in page["/Resources"]["/Font"].values():
        font = font.get_object()
        fonts[str(font["/BaseFont"])] = str(font["/Subtype"])
    assert fonts and "/Type3" not in fonts.values(), fonts
    assert any("DejaVuSerif" in name for name in fonts), fonts
    text = (out / "figures.md").read_text()
    assert "construct-eval figures" in text and all(str(r) in text for r in evaluated_runs)


def test_figures_are_drawn_from_the_stored_tables(evaluated_runs):
    with (evaluated_runs[0] / "metrics" / "detection.csv").open() as fh:
        stored = {r["scorer"]: float(r["auroc"]) for r in csv.DictReader(fh) if r["level"] == "document"}
    read = {e.scorer: e.value for e in read_detection(evaluated_runs[0]) if e.level == "document"}
    assert read == stored


def test_venue_widths_and_colours():
    assert venue_style("neurips", "full")["figure.figsize"][0] == pytest.approx(5.5, abs=0.01)
    assert venue_style("icml", "half")["figure.figsize"][0] == pytest.approx(3.25, abs=0.01)
    assert venue_style("acl", "half")["figure.figsize"][0] == pytest.approx(3.03, abs=0.01)
    assert venue_style("iclr", "full")["pdf.fonttype"] == 42
    assert colour("judge-doc:expected") == colour("judge-field") == OKABE_ITO[4]  # one family, one colour
    assert colour("field-prior-uses-labels@leaf") == "#999999"
    with pytest.raises(ValueError):
        venue_style("cvpr")
