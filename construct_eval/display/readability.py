"""Can a reader read a figure? Checks a reviewer would make, as code.

- :func:`png_border_ink`: ink on the outer border of a saved PNG means something is cut off;
- :func:`text_problems`: every text the renderer draws (titles, tick and axis labels, legend
  entries, annotations; measured with ``get_window_extent``) lies inside the canvas, no two
  overlap, and none is truncated with an ellipsis;
- :func:`frame_problems`: a note drawn in a panel (with its white box, where it has one) lies
  inside the panel's frame with a point to spare, or wholly outside it, never across or on it;
- :func:`series_problems`: no panel draws more than :data:`~construct_eval.display.style.MAX_SERIES`
  series (the drawing functions tag each series' artist with a ``series:`` gid).

:func:`problems` runs all of them on a figure. The tests run it on every figure ``figures``
makes, from the recorded runs and from a synthetic many-scorer, many-dataset case.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from construct_eval.display.style import MAX_SERIES, SERIES_GID

BORDER_PX = 3
ELLIPSES = ("...", "\u2026")


def png_border_ink(path: Path, border: int = BORDER_PX, threshold: int = 245) -> int:
    """How many pixels of the outer ``border`` pixels of a PNG carry ink (a channel below
    ``threshold`` on the white background)."""
    import numpy as np
    from PIL import Image

    with Image.open(path) as img:
        pixels = np.asarray(img.convert("RGB"))
    dark = pixels.min(axis=2) < threshold
    frame = np.ones_like(dark)
    frame[border:-border, border:-border] = False
    return int((dark & frame).sum())


@contextmanager
def _recording_texts() -> Iterator[list[tuple[Any, Bbox]]]:
    """Every text artist drawn meanwhile, with its window extent (as drawn)."""
    from matplotlib.text import Text

    drawn: list[tuple[Any, Bbox]] = []
    original = Text.draw

    def draw(self: Text, renderer: Any) -> None:
        original(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn.append((self, self.get_window_extent(renderer)))

    Text.draw = draw  # type: ignore[method-assign]
    try:
        yield drawn
    finally:
        Text.draw = original  # type: ignore[method-assign]


def drawn_texts(fig: Figure) -> list[tuple[str, Bbox]]:
    """(text, window extent in pixels) of every text the renderer draws on ``fig``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    with _recording_texts() as drawn:
        canvas.draw()
    last: dict[int, tuple[str, Bbox]] = {}
    for artist, box in drawn:  # a layout pass may draw a text twice: its last extent counts
        last[id(artist)] = (artist.get_text(), box)
    return list(last.values())


def _overlap(a: Bbox, b: Bbox, tolerance: float) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance and min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance


def text_problems(fig: Figure, tolerance: float = 0.5) -> list[str]:
    """Texts outside the canvas, overlapping another text, or cut with an ellipsis."""
    texts = drawn_texts(fig)
    width, height = fig.bbox.width, fig.bbox.height
    out = []
    for text, box in texts:
        label = text.replace("\n", " ")
        if box.x0 < -tolerance or box.y0 < -tolerance or box.x1 > width + tolerance or box.y1 > height + tolerance:
            out.append(f"text outside the canvas: {label!r}")
        if any(e in text for e in ELLIPSES):
            out.append(f"text cut with an ellipsis: {label!r}")
    for i, (a, box_a) in enumerate(texts):
        for b, box_b in texts[i + 1 :]:
            if _overlap(box_a, box_b, tolerance):
                out.append(f"texts overlap: {a.replace(chr(10), ' ')!r} and {b.replace(chr(10), ' ')!r}")
    return out


def _drawn_notes(fig: Figure) -> list[tuple[Any, Any, Bbox]]:
    """(axes, text, extent in pixels, its white box included) of every note drawn in a panel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    out = []
    for ax in fig.axes:
        if not (ax.get_visible() and ax.axison and any(sp.get_visible() for sp in ax.spines.values())):
            continue  # a panel without a frame (a legend's or a note's cell) has no line to touch
        for text in ax.texts:
            if not (text.get_visible() and text.get_text().strip()):
                continue
            out.append((ax, text, note_extent(text, renderer)))
    return out


def note_extent(text: Any, renderer: Any = None) -> Bbox:
    """A drawn text's extent in pixels with its white box, where it has one: what covers the
    frame's line when a note sits on it (the figure must have been drawn)."""
    box = text.get_window_extent(renderer)
    patch = text.get_bbox_patch()
    return box if patch is None else Bbox.union([box, patch.get_window_extent(renderer)])


def frame_problems(fig: Figure, margin_pt: float = 1.0) -> list[str]:
    """Notes in a panel that cross or touch its frame: a note is inside the frame with
    ``margin_pt`` to spare, or wholly outside it (a note under a panel), never on the line."""
    margin = margin_pt * fig.dpi / 72
    out = []
    for ax, text, box in _drawn_notes(fig):
        frame = ax.get_window_extent()
        inside = (
            box.x0 >= frame.x0 + margin
            and box.x1 <= frame.x1 - margin
            and box.y0 >= frame.y0 + margin
            and box.y1 <= frame.y1 - margin
        )
        outside = box.x1 <= frame.x0 or box.x0 >= frame.x1 or box.y1 <= frame.y0 or box.y0 >= frame.y1
        if not (inside or outside):
            title = ax.get_title().replace(chr(10), " ") or "untitled"
            label = text.get_text().replace(chr(10), " ")
            out.append(f"a note on the frame of panel {title!r}: {label!r}")
    return out


def series_per_panel(fig: Figure) -> list[int]:
    """The number of distinct series each visible axes draws."""
    counts = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        gids = {a.get_gid() for a in ax.get_children() if str(a.get_gid() or "").startswith(SERIES_GID)}
        counts.append(len(gids))
    return counts


def series_problems(fig: Figure, limit: int = MAX_SERIES) -> list[str]:
    return [f"a panel draws {n} series (at most {limit})" for n in series_per_panel(fig) if n > limit]


def problems(fig: Figure, png: Path | None = None) -> list[str]:
    """Everything a reader would flag that code can see, on ``fig`` and its saved ``png``."""
    out = text_problems(fig) + frame_problems(fig) + series_problems(fig)
    if png is not None:
        ink = png_border_ink(png)
        if ink:
            out.append(f"{png.name}: {ink} pixels of ink on the outer {BORDER_PX}-pixel border")
    return out
