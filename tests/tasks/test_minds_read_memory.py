"""Every registered SimLM mind has a test that it reads every memory's output (issue 30 item 4).

A new family's mind cannot skip it: each name of ``registry.MINDS`` needs
``tests/tasks/<family>/test_mind_reads_memory.py``, covering every registered memory but ``full``
(through ``tests/helpers/memory_plant.py``, whose outputs cover them all, or by naming each).
"""

from __future__ import annotations

import pytest

from memory_plant import MEMORIES as PLANTED
from pushbench import config
from pushbench.registry import MEMORIES, MINDS

REWRITING = [name for name in MEMORIES if name != "full"]  # memories that put their own message in the context


def test_the_shared_helper_plants_in_every_memory() -> None:
    assert all(any(p == m or p.startswith(m + "-") for p in PLANTED) for m in REWRITING), (PLANTED, REWRITING)


@pytest.mark.parametrize("family", list(MINDS))
def test_every_mind_has_a_memory_reading_test(family: str) -> None:
    path = config.ROOT / "tests" / "tasks" / family / "test_mind_reads_memory.py"
    assert path.is_file(), f"{family}'s SimLM mind has no tests/tasks/{family}/test_mind_reads_memory.py"
    text = path.read_text(encoding="utf-8")
    assert "memory_plant" in text or all(m in text or m.replace("-", "_") in text for m in REWRITING), \
        f"{path.name} misses a memory"
