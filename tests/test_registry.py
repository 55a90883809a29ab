"""One registry idiom: lazy name -> factory, the same error for an unknown name, declared SimLM minds."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pushbench import config, registry
from pushbench.policies import make_policy
from pushbench.policies.sim import mind_name
from pushbench.registry import (BACKENDS, CONTROLLERS, FAMILIES, MEMORIES, MINDS, PROVIDERS, Entry, Registry,
                                UnknownName)
from pushbench.tasks import get_family, load_tasks

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
        pytest.skip("run `python -m pushbench.manifests` first")
    for name in FAMILIES:
        family = get_family(name)
        tools = schemas(load_tasks(name, family_manifests)[0].tools)
        if family.mind is None:
            with pytest.raises(ValueError, match="SimLM has no reader"):
                mind_name(tools)
        else:
            assert mind_name(tools) == family.mind, name
            assert mind_name(tools + schemas(["core_memory_append", "core_memory_replace"])) == family.mind


def test_sharing_tool_names_is_not_enough_for_a_mind() -> None:
    reposcan = sorted(MINDS.entry("reposcan").meta["tools"])
    assert mind_name(schemas(reposcan)) == "reposcan"
    with pytest.raises(ValueError, match="SimLM has no reader"):
        mind_name(schemas([*reposcan, "rows"]))  # a new family with RepoScan's tools and one more
    with pytest.raises(ValueError, match="SimLM has no reader"):
        mind_name(schemas(reposcan[:-1]))


def test_two_minds_declaring_one_tool_set_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    twin = Entry("pushbench.tasks.reposcan.mind:RepoScanMind", meta={"tools": MINDS.entry("reposcan").meta["tools"]})
    monkeypatch.setattr(registry.MINDS, "_entries", {**MINDS._entries, "twin": twin})
    with pytest.raises(ValueError, match="several minds declare them: reposcan, twin"):
        mind_name(schemas(MINDS.entry("reposcan").meta["tools"]))


def test_model_names_go_through_the_provider_registry() -> None:
    assert make_policy("sim/mini").name == "sim/mini"
    with pytest.raises(UnknownName, match="unknown model 'anthropic/x'.*known providers: sim, openai"):
        make_policy("anthropic/x")
