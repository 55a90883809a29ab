"""The rows family's data: CSV files that ship inside the installed scikit-learn (nothing is
downloaded), read as their original field strings, and the row ids the tools show."""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

# Column names as scikit-learn documents them (each CSV's first line holds counts, not names).
COLUMNS = {
    "iris": ("sepal_length_cm", "sepal_width_cm", "petal_length_cm", "petal_width_cm", "target"),
    "wine_data": ("alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols",
                  "flavanoids", "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue",
                  "od280_od315_of_diluted_wines", "proline", "target"),
}
ROW_ID = re.compile(r"r[0-9]{4}")  # used with fullmatch: no trailing newline, ASCII digits


def data_file(dataset: str) -> Path:
    """A CSV inside the installed scikit-learn, found without importing it (an import takes ~2 s)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the rows family reads data sets bundled with scikit-learn; install it")
    return Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / f"{dataset}.csv"


@lru_cache(maxsize=8)
def load_rows(dataset: str) -> tuple[tuple[str, ...], ...]:
    """The data rows as their original field strings."""
    lines = data_file(dataset).read_text(encoding="utf-8").splitlines()[1:]
    rows = tuple(tuple(line.strip().split(",")) for line in lines if line.strip())
    if any(len(row) != len(COLUMNS[dataset]) for row in rows):
        raise ValueError(f"{dataset}: a row does not have {len(COLUMNS[dataset])} fields")
    return rows


def row_id(index: int) -> str:
    return f"r{index:04d}"
