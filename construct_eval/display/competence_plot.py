"""The positive control as a figure: CONSTRUCT's AUROC against a scripted judge's competence, with
the model judges' CONSTRUCT drawn where they sit, per top-level field and per document.

Reads the stored table ``metrics/construct_competence.csv``
(:mod:`construct_eval.studies.competence`) and computes nothing: each scripted competence's AUROC
(its 95% interval pooling the document bootstrap of every seed, shaded), and each model judge's
AUROC as a horizontal line across the panel with its interval shaded, named in a legend under the
curves with the competence the curve reaches there and at its interval's ends. An underpowered
judge row (too few items to rank, or an interval too wide) is not drawn: a note under the panels
names it with its count.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from construct_eval.csv_tables import read_rows
from construct_eval.display.style import BASELINE_GREY, CONSTRUCT_COLOUR, OKABE_ITO, model_label

LEVELS = (("field", "per top-level field"), ("document", "per {document}"))
JUDGE_COLOURS = (OKABE_ITO[4], OKABE_ITO[5], OKABE_ITO[2], OKABE_ITO[6])


def _rows(path: Path) -> list[dict[str, str]]:
    return read_rows(path)


def _q(where: str) -> str:
    """A place on the curve as the figure says it: ``q = 0.55``, or a bound, ``q <= 0.50``."""
    return f"q {where}" if where.startswith(("<", ">")) else f"q = {where}"


def competence_figure(table: Path, *, documents_word: str = "notice", setting: str = "") -> Any:
    """The figure (two panels) from a stored competence table; ``setting`` names the outputs the
    curve was drawn on in the title ("synthetic shipping notices, Qwen2.5-Coder-1.5B's outputs")."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rows = _rows(table)
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 4.0), sharey=True)
    not_drawn: dict[str, list[str]] = {}
    curves: list[Any] = []  # each panel's scripted curve
    for ax, (level, title) in zip(axes, LEVELS, strict=True):
        curve = sorted(
            (
                r
                for r in rows
                if r["level"] == level and r["score"] == "CONSTRUCT" and r["judge"].startswith("scripted")
            ),
            key=lambda r: float(r["competence"]),
        )
        q = [float(r["competence"]) for r in curve]
        a = [float(r["auroc"]) for r in curve]
        ax.fill_between(q, [float(r["auroc_low"]) for r in curve], [float(r["auroc_high"]) for r in curve],
                        color=CONSTRUCT_COLOUR, alpha=0.15, lw=0)  # fmt: skip
        curves.append(
            ax.plot(q, a, "o-", color=CONSTRUCT_COLOUR, lw=1.8, ms=4, label="scripted judge of competence q")[0]
        )
        ax.axhline(0.5, color=BASELINE_GREY, lw=0.8, ls=":")
        judges = [r for r in rows if r["level"] == level and not r["judge"].startswith("scripted")]
        unit = "fields" if level == "field" else f"{documents_word}s"
        drawn: list[Any] = []
        for k, r in enumerate(judges):
            colour = JUDGE_COLOURS[k % len(JUDGE_COLOURS)]
            if r.get("underpowered"):
                not_drawn.setdefault(model_label(r["judge"]), []).append(f"{int(float(r['n'])):,} {unit}")
                continue
            y, lo, hi = float(r["auroc"]), float(r["auroc_low"]), float(r["auroc_high"])
            ax.axhspan(lo, hi, color=colour, alpha=0.10, lw=0)
            place = f"at {_q(r['competence'])}"
            if r.get("competence_low") and r.get("competence_high"):  # the ends of its AUROC interval on the curve
                place += f"; its interval at {_q(r['competence_low'])} to {_q(r['competence_high'])}"
            note = f"{model_label(r['judge'])} judge: {y:.3f} on {int(float(r['n'])):,} {unit}\n{place}"
            drawn.append(ax.axhline(y, color=colour, lw=1.4, ls="--", label=note))
        # the judges named in a legend under the curves, where no line or band runs: labels beside
        # their lines collide when two judges sit close
        if drawn:
            ax.add_artist(ax.legend(handles=drawn, loc="lower right", fontsize=7.5, frameon=False, handlelength=2.2))
        ax.set_title(title.format(document=documents_word), fontsize=10)
        ax.set_xlabel("competence q: the judge is right about each field\nwith probability q, wrong or right")
        ax.set_xlim(0.48, 1.02)
        ax.set_ylim(0.0, 1.03)
        ax.grid(alpha=0.25, lw=0.5)
    axes[0].set_ylabel("AUROC of CONSTRUCT for finding wrong items")
    seeds = int(float(next(r["seeds"] for r in rows if r["judge"].startswith("scripted"))))
    shade = Patch(facecolor="0.5", alpha=0.2, lw=0, label=f"shaded: 95% intervals (the curve's over {seeds} seeds)")
    axes[0].legend(handles=[curves[0], shade], loc="upper left", fontsize=8, frameon=False)
    n_docs = int(float(next(r["documents"] for r in rows if r["judge"].startswith("scripted"))))
    fig.suptitle(
        f"CONSTRUCT's own code finds errors when its judge can: chance at q = 0.5, perfect at q = 1\n"
        f"({n_docs:,} {setting or documents_word + 's'})",
        fontsize=10.5,
    )
    fig.tight_layout()
    if not_drawn:
        said = "; ".join(f"{judge} ({' and '.join(counts)} scored)" for judge, counts in not_drawn.items())
        fig.text(
            0.01,
            -0.02,
            f"Not drawn, too few items to rank or an interval too wide: {said}.",
            fontsize=8,
            color="#444444",
            va="top",
        )
    return fig


def _setting(run: Path) -> str:
    """The run's outputs as the title names them: its dataset and its generator."""
    import json

    from construct_eval.display.style import paper_dataset_label

    model = json.loads((run / "run.json").read_text()).get("generator", {}).get("endpoint", {}).get("model", "")
    dataset = paper_dataset_label(run.name)[0]
    return f"{dataset}, {model_label(model)}'s outputs" if model else dataset


def draw(run: Path, out: Path | None = None, *, documents_word: str = "notice") -> Path:
    """Draw the run's competence figure to ``figures/construct_competence.png`` (or ``out``)."""
    from construct_eval.display.plots import save

    fig = competence_figure(
        run / "metrics" / "construct_competence.csv", documents_word=documents_word, setting=_setting(run)
    )
    return save(fig, out or run / "figures" / "construct_competence.png", dpi=150)


def main(argv: Sequence[str] | None = None) -> int:
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    for run in args:
        print(f"wrote {draw(Path(run))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
