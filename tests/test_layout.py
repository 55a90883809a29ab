"""The package root holds only the kernel; every other module lives in the folder of its concept.

A new root module must be kernel (what most of the package imports: configuration, registry,
shared vocabulary, tokens, requirement ids, prices, pinned sources, the verifier) and named here and in
the README's layout; a test at tests/ root is a kernel module's or checks the repository as a whole.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pushbench
from pushbench import config

PACKAGE = Path(pushbench.__file__).parent
KERNEL = {"config", "guidance", "prices", "registry", "requirements", "snapshots", "tokens", "verifier"}
REPOSITORY_CHECKS = {"adding_a_family", "blas_kernels", "dvc_stages", "environment_yml", "imports", "layout",
                     "leaks", "new_repository", "pipeline_smoke"}


def readme_layout() -> str:
    text = (config.ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Layout")
    return text[start:text.index("\n## ", start + 1)]


def test_the_package_root_holds_only_kernel_modules() -> None:
    root = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert root == KERNEL, f"root modules beyond the kernel: {sorted(root - KERNEL)}; missing: {sorted(KERNEL - root)}"


def test_the_readme_layout_names_every_root_module_and_package() -> None:
    layout = readme_layout()
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    missing = [f"{m}.py" for m in sorted(KERNEL) if f"  {m}.py " not in layout]
    missing += [f"{p}/" for p in sorted(packages) if f"  {p}/ " not in layout]
    assert not missing, f"README.md's layout does not name {missing}"


def test_root_tests_are_kernel_tests_or_repository_checks() -> None:
    names = {p.stem.removeprefix("test_") for p in (config.ROOT / "tests").glob("test_*.py")}
    stray = names - KERNEL - REPOSITORY_CHECKS
    assert not stray, f"tests/test_{sorted(stray)[0]}.py tests a module outside the root: move it beside its module's tests"


MODULE_REFERENCE = re.compile(r"(?:python -m|from|import) (pushbench(?:\.\w+)*)")
GUIDE_EXAMPLE = "pushbench.tasks.pyfiles"  # the family docs/adding-a-family.md builds (its test follows it)


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent that is not a package
        return False


def test_every_module_a_command_or_import_names_exists() -> None:
    """A moved module leaves no command or import naming its old place behind (``python -m``,
    ``from ... import``, ``import``) in code, docs, notebooks or the stage and make files."""
    tracked = subprocess.run(["git", "ls-files", "src", "tests", "docs", "notebooks", "benchmarks", "README.md",
                              "Makefile", "dvc.yaml", ".ci"], cwd=config.ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    missing = set()
    for rel in tracked:
        path = config.ROOT / rel
        if path.suffix not in (".py", ".md", ".yaml", ".yml", "") or not path.is_file():
            continue
        for name in MODULE_REFERENCE.findall(path.read_text(encoding="utf-8", errors="replace")):
            if not name.startswith(GUIDE_EXAMPLE) and not _module_exists(name):
                missing.add(f"{rel}: {name}")
    assert not missing, f"names of modules that do not exist: {sorted(missing)[:10]}"
