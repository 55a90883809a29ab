"""DataOps-lite sources: real data that ships inside installed packages, and snapshot metadata.

- CSV data: scikit-learn's bundled data sets (``sklearn/datasets/data``) and their descriptions
  (``sklearn/datasets/descr``). Rows keep their original text; the fixture CSV gets a header of
  column names (the feature names scikit-learn documents for each set). Nothing is downloaded.
- Metadata: the pinned snapshots' ``PKG-INFO`` headers (up to the first blank line), the
  ``[project]`` part of ``pyproject.toml`` and the version modules.

Locating scikit-learn uses ``importlib.util.find_spec``, which does not import it (fast).
"""

from __future__ import annotations

import gzip
import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_BC = ["radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity",
       "concave_points", "symmetry", "fractal_dimension"]


@dataclass(frozen=True)
class Dataset:
    name: str
    file: str  # file name under sklearn/datasets/data
    columns: tuple[str, ...]
    doc: str  # description under sklearn/datasets/descr
    meta_line: bool  # first line is "n_samples,n_features,class names..." (not data)
    header_line: bool = False  # first line is a header of names (replaced by ours)
    sep: str = ","
    classes: tuple[str, ...] = ()  # class names of the integer target column, if any

    @property
    def csv_name(self) -> str:
        return self.name + ".csv"

    @property
    def has_target(self) -> bool:
        return bool(self.classes)


DATASETS: dict[str, Dataset] = {d.name: d for d in [
    Dataset("iris", "iris.csv", ("sepal_length_cm", "sepal_width_cm", "petal_length_cm", "petal_width_cm",
                                 "target"), "iris.rst", True, classes=("setosa", "versicolor", "virginica")),
    Dataset("wine_data", "wine_data.csv", (
        "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids",
        "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280_od315_of_diluted_wines",
        "proline", "target"), "wine_data.rst", True, classes=("class_0", "class_1", "class_2")),
    Dataset("breast_cancer", "breast_cancer.csv",
            tuple([f"mean_{b}" for b in _BC] + [f"{b}_error" for b in _BC] + [f"worst_{b}" for b in _BC]
                  + ["target"]), "breast_cancer.rst", True, classes=("malignant", "benign")),
    Dataset("diabetes", "diabetes_data_raw.csv.gz", ("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"),
            "diabetes.rst", False, sep=" "),
    Dataset("linnerud_exercise", "linnerud_exercise.csv", ("chins", "situps", "jumps"), "linnerud.rst", False,
            header_line=True, sep=" "),
    Dataset("linnerud_physiological", "linnerud_physiological.csv", ("weight", "waist", "pulse"),
            "linnerud.rst", False, header_line=True, sep=" "),
]}


def sklearn_datasets_dir() -> Path:
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("scikit-learn is not installed; DataOps-lite needs its bundled data sets")
    return Path(list(spec.submodule_search_locations)[0]) / "datasets"


@lru_cache(maxsize=16)
def dataset_rows(name: str) -> tuple[tuple[str, ...], ...]:
    """The data rows as their original field strings."""
    ds = DATASETS[name]
    path = sklearn_datasets_dir() / "data" / ds.file
    raw = gzip.decompress(path.read_bytes()).decode() if ds.file.endswith(".gz") else path.read_text(encoding="utf-8")
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    if ds.meta_line or ds.header_line:
        lines = lines[1:]
    rows = tuple(tuple(f for f in (line.split(ds.sep) if ds.sep != " " else line.split())) for line in lines)
    bad = [i for i, r in enumerate(rows) if len(r) != len(ds.columns)]
    if bad:
        raise ValueError(f"{ds.file}: row {bad[0] + 1} has an unexpected number of fields")
    return rows


@lru_cache(maxsize=16)
def csv_text(name: str) -> str:
    ds = DATASETS[name]
    return "\n".join([",".join(ds.columns), *(",".join(r) for r in dataset_rows(name))]) + "\n"


@lru_cache(maxsize=16)
def doc_text(name: str) -> str:
    return (sklearn_datasets_dir() / "descr" / DATASETS[name].doc).read_text(encoding="utf-8")


def class_count(name: str, target: int) -> int:
    return sum(1 for r in dataset_rows(name) if int(float(r[-1])) == target)


# --- snapshot metadata --------------------------------------------------------------------------

VERSION_FILES = {"requests": "src/requests/__version__.py", "pytest": "src/_pytest/_version.py"}


@lru_cache(maxsize=16)
def snapshot_file(root: str, repo: str, rel: str) -> str:
    return (Path(root) / repo / rel).read_text(encoding="utf-8")


def pkg_info(root: str, repo: str) -> str:
    """The PKG-INFO metadata header: everything before the first blank line."""
    text = snapshot_file(root, repo, "PKG-INFO")
    return text.split("\n\n", 1)[0].rstrip("\n") + "\n"


def project_table(root: str, repo: str) -> str:
    """The ``[project]`` table of pyproject.toml (with its ``[project.*]`` sub-tables)."""
    lines = snapshot_file(root, repo, "pyproject.toml").splitlines()
    out, inside = [], False
    for line in lines:
        if line.startswith("["):
            inside = line.startswith("[project")
        if inside:
            out.append(line)
    if not out:
        raise ValueError(f"{repo}: pyproject.toml has no [project] table")
    return "\n".join(out).rstrip("\n") + "\n"


_PY_ASSIGN = r"^{var}\s*=\s*(?:\w+\s*=\s*)?[\"']([^\"']*)[\"']"
_TOML_STR = r"^{key}\s*=\s*\"([^\"]*)\""
_TOML_LICENSE = re.compile(r"^license\s*=\s*\{\s*text\s*=\s*\"([^\"]*)\"")


def py_value(lines: list[str], var: str) -> str | None:
    pattern = re.compile(_PY_ASSIGN.format(var=re.escape(var)))
    return next((m.group(1) for line in lines if (m := pattern.match(line))), None)


def toml_value(lines: list[str], key: str) -> str | None:
    if key == "license":
        return next((m.group(1) for line in lines if (m := _TOML_LICENSE.match(line))), None)
    pattern = re.compile(_TOML_STR.format(key=re.escape(key)))
    return next((m.group(1) for line in lines if (m := pattern.match(line))), None)


def header_value(lines: list[str], field: str) -> str | None:
    prefix = field + ": "
    return next((line[len(prefix):] for line in lines if line.startswith(prefix)), None)
