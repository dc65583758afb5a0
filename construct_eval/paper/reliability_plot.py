"""The paper's reliability figure (:func:`reliability_grid`): out-of-fold reliability diagrams, one
panel per (score, dataset). Its layout is the figures' shared one (:mod:`.paper_plots`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from construct_eval.display import plots
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.display.style import wrap
from construct_eval.paper.figure_data import _float
from construct_eval.paper.paper_plots import grid_shape, is_narrow, legend_below, panel_grid


def reliability_height(panels: int) -> float:
    """The height (inches) :func:`reliability_grid` gives so many panels in the current style context."""
    import matplotlib

    width, _ = matplotlib.rcParams["figure.figsize"]
    ncols, nrows = grid_shape(panels)
    return nrows * (width / ncols * 0.9 + 0.35) + 0.35


def reliability_grid(bins: Sequence[Mapping[str, Any]], *, style: Mapping[str, Any]) -> Figure:
    """Out-of-fold reliability diagrams, one panel per (score, dataset), score by score: the
    observed error rate (Wilson 95%) per equal-mass bin of predicted P(error), isotonic and Platt."""
    import matplotlib

    pairs = list(dict.fromkeys((b["scorer"], b["dataset"]) for b in bins))
    with matplotlib.rc_context(dict(style)):
        width, _ = matplotlib.rcParams["figure.figsize"]
        ncols, _ = grid_shape(len(pairs))
        fig = Figure(figsize=(width, reliability_height(len(pairs))), layout="constrained")
        axes = panel_grid(fig, len(pairs), sharex=True, sharey=True)
        for k, (ax, (scorer, dataset)) in enumerate(zip(axes, pairs, strict=True)):
            mine = [b for b in bins if b["scorer"] == scorer and b["dataset"] == dataset]
            tables = {m: [b for b in mine if b["method"] == m] for m in ("isotonic", "platt")}
            plots.draw_reliability(ax, {m: t for m, t in tables.items() if t}, ms=2)
            n = sum(int(_float(b["n"])) for b in mine if b["method"] == mine[0]["method"])
            name, how = dataset_label(dataset)
            ax.set_title(
                wrap(
                    f"{plots.labels_for([scorer])[0]}\n{name}, {how.split(',')[0]}\nn={n:,}", 20 if is_narrow() else 30
                ),
                fontsize="x-small",
            )
            ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
            ax.set_yticks([0, 0.5, 1], ["0", "0.5", "1"])
            if k % ncols == 0:
                ax.set_ylabel("observed\nerror rate", fontsize="x-small")
            if k >= len(pairs) - ncols:
                ax.set_xlabel("predicted P(error)", fontsize="x-small")
        handles, labels = [], []
        for ax in axes:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        legend_below(fig, handles, labels)
    return fig
