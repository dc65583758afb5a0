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
import os
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


NOTEBOOK_WIDTH = 800
"""Pixels a paper figure takes in a notebook: a text-width figure's 9 pt text reads at about 18 px,
and a screen 900 px tall holds most of one figure."""


ANSWERS = ("headline", "first sentence", "whole")
"""How much of a figure's message :func:`answered_figure` shows: its first clause, its first
sentence (that clause and what qualifies it), or every sentence of the caption."""


def notebook_link(target: str | Path, here: str | Path) -> str:
    """The path of ``target`` relative to ``here``, the folder an executed notebook lives in
    (``results/notebooks/``: an output folder's parent), as a Markdown link in it wants it."""
    return Path(os.path.relpath(Path(target).resolve(), Path(here).resolve())).as_posix()


def figure_entry(folder: str | Path, name: str) -> dict[str, Any]:
    """The figure set's manifest entry of figure ``name`` (its question ``what`` and its caption
    ``message``), from ``folder/manifest.json``."""
    return json.loads((Path(folder) / "manifest.json").read_text())["files"][f"{name}.png"]


def answered_figure(
    folder: str | Path,
    name: str,
    *,
    answer: str = "first sentence",
    width: int = NOTEBOOK_WIDTH,
    notebook_dir: str | Path = "results/notebooks",
) -> list[Any]:
    """A figure of a paper figure set (``folder``, written by ``construct-eval figures`` with its
    ``manifest.json``) and its answer, to ``display(*...)``: the message the set computed from
    what the figure draws, as much of it as ``answer`` says (:data:`ANSWERS`): its first clause, or
    its first sentence whole, or that and each further sentence a bullet; where some is left out, a link to the whole caption in
    the set's ``figures.md``, relative to ``notebook_dir`` (where the executed notebook is read)."""
    from IPython.display import Markdown

    if answer not in ANSWERS:
        raise ValueError(f"answer must be one of {', '.join(ANSWERS)}, not {answer!r}")
    entry = figure_entry(folder, name)
    # the parts the set stored beside the message: the answer, each further sentence (a bullet, as
    # figures.md lists them) and the answer's first clause, the headline
    sentences = [s.rstrip(".") for s in [entry["answer"], *entry["also"]]]
    parts = [entry["headline"]] if answer == "headline" else sentences
    kept = parts[:1] if answer != "whole" else parts
    first, *rest = kept
    text = f"**Answer.** {_capital(first)}." + "".join(f"\n- {_capital(part)}." for part in rest)
    if answer != "whole" and (len(sentences) > 1 or (answer == "headline" and entry["headline"] != sentences[0])):
        index = notebook_link(Path(folder) / "figures.md", notebook_dir)
        text += f" ([The whole caption]({index}).)" if not rest else f"\n\n[The whole caption]({index})."
    return [stored_figure(Path(folder) / f"{name}.png", width), Markdown(text)]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


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
