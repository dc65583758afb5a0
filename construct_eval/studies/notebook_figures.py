"""Stored figures shown in the notebooks, and the check that an executed notebook shows them as
they are on disk.

A notebook that displays a figure file embeds the file's bytes at the time it ran; when the
figure is redrawn later (a new palette, a new run), the executed notebook goes on showing the old
one, and nothing says so. :func:`stored_figure` displays a file and records, in the image's
metadata, which file it is and the digest of the bytes it embedded; :func:`stale_figures` reads an
executed notebook and lists every embedded figure whose file is gone or now holds other bytes.
``make reproduce`` and the tests run the check over ``results/notebooks/``::

    python -m construct_eval.studies.notebook_figures results/notebooks/*.ipynb
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

KEY = "construct_eval_figure"
"""The image-metadata key holding the displayed file (relative to the working folder) and its digest."""


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stored_figure(path: str | Path, width: int | None = None) -> Any:
    """An IPython image of the figure file ``path`` that names its file (from the working folder)
    and the digest of the bytes it embeds (what :func:`stale_figures` checks); ``width`` in pixels."""
    from IPython.display import Image

    data = Path(path).read_bytes()
    return Image(
        data=data, format="png", width=width, metadata={KEY: {"file": _relative(path), "sha256": _digest(data)}}
    )


def _relative(path: str | Path) -> str:
    """``path`` from the working folder (the repository, where the notebooks run), so an executed
    notebook names no machine's folders; as given when it lies elsewhere."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def _shown(notebook: str | Path) -> Iterator[tuple[int, dict[str, str], str]]:
    """Each figure an executed ``notebook`` shows through :func:`stored_figure`, in order: its
    cell's number, what the image's metadata records (file, digest) and the embedded PNG (base64)."""
    for number, cell in enumerate(json.loads(Path(notebook).read_text())["cells"]):
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get("image/png", {})
            if isinstance(meta, dict) and meta.get(KEY):
                yield number, meta[KEY], output["data"]["image/png"]


def stale_figures(notebook: str | Path, root: str | Path = ".") -> list[str]:
    """Each figure an executed ``notebook`` shows through :func:`stored_figure` whose file (read
    from ``root``, the folder the notebook ran in) is missing or holds other bytes than the ones
    embedded, one line each naming the notebook, the cell and the file; empty when all are current."""
    problems = []
    for number, shown, png in _shown(notebook):
        where = f"{Path(notebook).name}, cell {number}: {shown['file']}"
        if _digest(base64.b64decode(png)) != shown["sha256"]:
            problems.append(f"{where}: the embedded image is not the one its digest names")
            continue
        file = Path(root) / shown["file"]
        if not file.is_file():
            problems.append(f"{where}: the file is gone")
        elif _digest(file.read_bytes()) != shown["sha256"]:
            problems.append(f"{where}: the file was redrawn after the notebook ran; execute the notebook again")
    return problems


def shown_figures(notebook: str | Path) -> list[str]:
    """The files an executed ``notebook`` shows through :func:`stored_figure`, in order."""
    return [shown["file"] for _, shown, _ in _shown(notebook)]


def main(argv: Sequence[str] | None = None) -> int:
    """Check each executed notebook named; print every stale figure; exit 1 if any."""
    paths = list(sys.argv[1:] if argv is None else argv)
    problems = [line for path in paths for line in stale_figures(path)]
    shown = sum(len(shown_figures(path)) for path in paths)
    print("\n".join(problems) if problems else f"{shown} stored figures in {len(paths)} notebooks, each as on disk")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
