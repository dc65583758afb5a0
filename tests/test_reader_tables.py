"""The Markdown tables a reader opens: display names, intervals in one cell, about ten columns, and
always the same table as the CSV beside them."""

from __future__ import annotations

import re
from pathlib import Path

from construct_eval.reports.reader_tables import reader_markdown, rewrite_markdown
from construct_eval.reports.tables import write_table

ROOT = Path(__file__).resolve().parents[1]
MAX_COLUMNS = 11

DETECTION_ROW = {
    "level": "document", "scorer": "judge-doc", "n": 200, "documents": 200, "positives": 60, "prevalence": 0.3,
    "auroc": 0.6123, "auroc_low": 0.559, "auroc_high": 0.6671, "auprc": 0.433, "auprc_low": 0.333,
    "auprc_high": 0.525, "precision@10%": 0.762, "recall@10%": 0.254, "unscored": 0, "rating_use": "flat (5:9% 10:90%)",
    "uses_labels": False, "underpowered": "", "calls": 200, "tokens": 252128, "seconds": 2715.0,
}  # fmt: skip


def _header(md: str) -> list[str]:
    line = next(x for x in md.splitlines() if x.startswith("|"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_a_detection_table_reads_as_a_reader_needs_it(tmp_path: Path) -> None:
    write_table([DETECTION_ROW, {**DETECTION_ROW, "scorer": "field-prior-uses-labels", "uses_labels": True}],
                tmp_path / "detection", "Error detection")  # fmt: skip
    md = (tmp_path / "detection.md").read_text()
    header = _header(md)
    assert len(header) <= MAX_COLUMNS and "AUROC" in header and "scorer" not in header, header
    assert "| 200 (200, 60) | 0.612 [0.559, 0.667] |" in md, md
    assert "judge-doc" not in md.split("Every column")[0], md  # the reader's name, not the internal one
    assert "uses labels" in md
    assert "[detection.csv](detection.csv)" in md  # where every column is
    csv_header = (tmp_path / "detection.csv").read_text().splitlines()[0].split(",")
    assert "auroc_low" in csv_header and "tokens" in csv_header  # the CSV keeps every column


def test_the_markdown_is_made_from_the_csv_so_remaking_it_changes_nothing(tmp_path: Path) -> None:
    rows = [{"variant_a": "sec:r-s-o|fields:original", "variant_b": "sec:o-s-r|fields:original", "n": 200,
             "mean_a": 4.74, "mean_b": 5.13, "mean_shift": 0.39, "shift_low": 0.225, "shift_high": 0.575,
             "wilcoxon_p_holm": 1e-5, "weighted_kappa": 0.117}]  # fmt: skip
    write_table(rows, tmp_path / "bias_pairs_doc", "Rating shifts")
    first = (tmp_path / "bias_pairs_doc.md").read_text()
    assert "output first" in first and "sec:" not in first, first
    assert "0.390 [0.225, 0.575]" in first and "4.740 / 5.130" in first
    assert not rewrite_markdown(tmp_path / "bias_pairs_doc.csv")
    assert (tmp_path / "bias_pairs_doc.md").read_text() == first


def test_a_table_without_a_view_keeps_the_columns_its_writer_chose(tmp_path: Path) -> None:
    rows = [{"run": "a", "model": "m", "auroc": 0.5, "auroc_low": 0.4, "auroc_high": 0.6, "extra": 1}]
    write_table(rows, tmp_path / "table", md_columns=["run", "auroc", "auroc_low", "auroc_high"])
    assert _header((tmp_path / "table.md").read_text()) == ["run", "AUROC"]
    assert "0.500 [0.400, 0.600]" in reader_markdown("table", rows, list(rows[0]))


def test_every_table_the_readme_and_findings_link_has_about_ten_columns() -> None:
    linked: set[Path] = set()
    for doc in (ROOT / "README.md", ROOT / "results" / "FINDINGS.md"):
        for target in re.findall(r"\]\(([^)]+/metrics/[^)]+\.md)\)", doc.read_text()):
            linked.add((doc.parent / target).resolve())
    assert len(linked) >= 10, linked
    wide = {p.relative_to(ROOT): len(_header(p.read_text())) for p in linked}
    assert all(n <= MAX_COLUMNS for n in wide.values()), {p: n for p, n in wide.items() if n > MAX_COLUMNS}
    internal = {p.relative_to(ROOT) for p in linked if re.search(r"\| (judge-doc|judge-field|ext-)", p.read_text())}
    assert not internal, internal


def test_calibration_maps_and_their_readings_are_named_in_a_readers_words():
    from construct_eval.reports.reader_tables import _cell

    assert _cell({"method": "platt"}, "method") == "Platt"
    assert _cell({"method": "netcal-beta"}, "method") == "beta calibration (netcal)"
    assert _cell({"reading": "platt (out of fold)"}, "reading") == "Platt (out of fold)"
    assert _cell({"reading": "per value (out of fold)"}, "reading") == "per value (out of fold)"


def test_a_ranking_names_the_score_in_a_readers_words_whichever_way_it_goes():
    """'field-prior-uses-labels@leaf lower' is the table's internal name; the reader's table says
    which score ranks lower or higher by its reader's name, as the score columns do."""
    from construct_eval.reports.reader_tables import _cell

    assert (
        _cell({"ranking": "field-prior-uses-labels@leaf lower"}, "ranking")
        == "field prior (uses labels), leaf fields lower"
    )
    assert _cell({"ranking": "token_logprob@top higher"}, "ranking") == "token log-probs, top-level fields higher"
    assert _cell({"ranking": "none: the interval holds 0"}, "ranking") == "none: the interval holds 0"
