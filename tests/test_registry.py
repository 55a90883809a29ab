"""One registry idiom: lazy name -> factory, the same error for an unknown name, declared SimLM minds,
and families that declare themselves in their own packages."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from pushbench import config
from pushbench.policies import make_policy
from pushbench.policies.sim import mind_name
from pushbench.registry import (BACKENDS, CONTROLLERS, FAMILIES, MEMORIES, MINDS, PROVIDERS, Entry, Registry,
                                UnknownName)
from pushbench.tasks import declaration, get_family, load_tasks, register, unregister
from pushbench.tasks.base import Declaration, Deliverable, MindSpec

SRC = Path(__file__).resolve().parents[1] / "src" / "pushbench"

ALL = {"task family": FAMILIES, "controller": CONTROLLERS, "memory": MEMORIES, "backend": BACKENDS,
       "model provider": PROVIDERS, "SimLM mind": MINDS}


def schemas(names) -> list[dict]:
    return [{"type": "function", "function": {"name": n, "description": "", "parameters": {}}} for n in names]


@pytest.mark.parametrize("kind", sorted(ALL))
def test_an_unknown_name_gets_the_same_error_listing_the_known_ones(kind: str) -> None:
    reg = ALL[kind]
    with pytest.raises(UnknownName) as err:
        reg.load("no-such-name")
    assert str(err.value) == f"unknown {kind} 'no-such-name'; known: {', '.join(reg.names())}"
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)


@pytest.mark.parametrize("kind", sorted(ALL))
def test_every_entry_loads(kind: str) -> None:
    for name in ALL[kind]:
        assert callable(ALL[kind].load(name)), name


def test_naming_one_family_does_not_import_the_others() -> None:
    probe = ("import sys; from pushbench.tasks import get_family; get_family('reposcan'); "
             "print(sorted(m for m in sys.modules if m.startswith('pushbench.tasks.')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "pushbench.tasks.reposcan.family" in loaded
    assert not any(f"pushbench.tasks.{other}" in loaded for other in ("dataops", "swe", "rows"))


def test_entries_carry_factory_arguments_and_can_be_added() -> None:
    assert CONTROLLERS.make("stateqgp-dedupe").name == "stateqgp-dedupe"
    reg = Registry("thing", {"a": "collections:OrderedDict"})
    reg.add("b", Entry("builtins:dict", {"x": 1}))
    assert reg.make("b") == {"x": 1} and reg.names() == ["a", "b"]
    reg.remove("b")
    with pytest.raises(UnknownName, match="known: a$"):
        reg.make("b")


def test_each_family_gets_exactly_its_declared_mind() -> None:
    family_manifests = config.MANIFESTS  # `make test` builds every family's manifests first
    if not all((family_manifests / f"{name}.jsonl").is_file() for name in FAMILIES):
        pytest.skip("run `python -m pushbench.tasks.manifests` first")
    for name in FAMILIES:
        mind = declaration(name).mind
        tools = schemas(load_tasks(name, family_manifests)[0].tools)
        if mind is None:
            with pytest.raises(ValueError, match="SimLM has no reader"):
                mind_name(tools)
        else:
            assert mind_name(tools) == name, name
            assert mind_name(tools + schemas(["core_memory_append", "core_memory_replace"])) == name


def test_sharing_tool_names_is_not_enough_for_a_mind() -> None:
    reposcan = sorted(MINDS.entry("reposcan").meta["tools"])
    assert mind_name(schemas(reposcan)) == "reposcan"
    with pytest.raises(ValueError, match="SimLM has no reader"):
        mind_name(schemas([*reposcan, "rows"]))  # a new family with RepoScan's tools and one more
    with pytest.raises(ValueError, match="SimLM has no reader"):
        mind_name(schemas(reposcan[:-1]))


def test_two_minds_declaring_one_tool_set_are_refused() -> None:
    reposcan = declaration("reposcan")
    register("twin", Declaration(reposcan.family, mind=reposcan.mind))
    try:
        with pytest.raises(ValueError, match="several minds declare them: reposcan, twin"):
            mind_name(schemas(MINDS.entry("reposcan").meta["tools"]))
    finally:
        unregister("twin")
    assert mind_name(schemas(MINDS.entry("reposcan").meta["tools"])) == "reposcan"


def test_every_family_in_the_package_declares_itself() -> None:
    """Each subpackage of pushbench.tasks is a family with a declaration, found under its folder's name."""
    folders = sorted(p.parent.name for p in (SRC / "tasks").glob("*/__init__.py"))
    assert FAMILIES.names() == folders
    for name in folders:
        found = declaration(name)
        assert FAMILIES.entry(name).target == found.family and found.family.startswith(f"pushbench.tasks.{name}.")
        assert (name in MINDS) == (found.mind is not None)
        if found.mind is not None:
            assert MINDS.entry(name).target == found.mind.target and callable(MINDS.load(name))


def test_a_family_outside_the_package_is_registered_at_run_time() -> None:
    rows = declaration("rows")
    mind = MindSpec("pushbench.tasks.reposcan.mind:RepoScanMind", {"rows", "submit", "status", "final", "peek"})
    register("outside", Declaration(rows.family, mind=mind, deliverable=Deliverable(("submit",))))
    try:
        assert "outside" in FAMILIES and get_family("outside").name == "outside"
        assert declaration("outside").deliverable == Deliverable(("submit",))
        assert mind_name(schemas(sorted(mind.tools))) == "outside"
    finally:
        unregister("outside")
    assert "outside" not in FAMILIES and "outside" not in MINDS
    with pytest.raises(UnknownName, match="unknown task family 'outside'; known: corpus, "):
        declaration("outside")


def test_a_declaration_names_known_roles_only() -> None:
    with pytest.raises(ValueError, match="unknown tool role 'pages'"):
        Declaration("pushbench.tasks.rows.family:RowsFamily", roles={"units", "pages"})


def test_an_installed_plugin_family_is_found_through_its_entry_point(tmp_path: Path) -> None:
    """A family in another distribution declares itself with an entry point (group pushbench.families)."""
    plugin = tmp_path / "plugin"
    (plugin / "outside_family").mkdir(parents=True)
    (plugin / "outside_family" / "__init__.py").write_text(
        "from pushbench.tasks.base import Declaration, Deliverable\n"
        "FAMILY = Declaration('pushbench.tasks.rows.family:RowsFamily', deliverable=Deliverable(('submit',)))\n")
    info = plugin / "outside_family-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: outside-family\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pushbench.families]\nplugged = outside_family:FAMILY\n")
    probe = ("from pushbench.registry import FAMILIES; from pushbench.tasks import declaration, get_family; "
             "print(FAMILIES.names()); print(declaration('plugged').deliverable.tools, get_family('plugged').name)")
    env = {**__import__("os").environ, "PYTHONPATH": str(plugin)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True).stdout
    assert "'plugged'" in out.splitlines()[0] and out.splitlines()[1] == "('submit',) plugged"


# Modules every family's stages depend on name no family: what is per family is declared in its package.
SHARED = ["registry.py", "tasks/manifests.py", "verifier.py", "tasks/__init__.py", "tasks/base.py", "scoring", "runner",
          "controllers", "policies", "memory", "tools", "backends"]


def test_no_shared_module_names_a_family() -> None:
    names = set(FAMILIES.names())
    offenders = []
    for rel in SHARED:
        path = SRC / rel
        for module in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            constants = {n.value for n in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
                         if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            offenders += [f"{module.relative_to(SRC)}: {name!r}" for name in sorted(constants & names)]
    assert not offenders, offenders


def test_model_names_go_through_the_provider_registry() -> None:
    assert make_policy("sim/mini").name == "sim/mini"
    with pytest.raises(UnknownName, match="unknown model 'anthropic/x'.*known providers: sim, openai"):
        make_policy("anthropic/x")
