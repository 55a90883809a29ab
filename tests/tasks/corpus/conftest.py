"""The built corpus, its index and the corpus manifests (built once if missing)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pushbench import config


@pytest.fixture(scope="session")
def corpus_docs() -> list[Any]:
    from pushbench.tasks.corpus.build import CORPUS_DIR, DOCUMENTS, build_corpus, read_corpus, write_corpus

    if not (CORPUS_DIR / DOCUMENTS).is_file():
        write_corpus(build_corpus(config.params("corpus")), CORPUS_DIR)
    return read_corpus()


@pytest.fixture(scope="session")
def corpus_tasks(corpus_docs: list[Any]) -> list[Any]:
    from pushbench.tasks.manifests import build_family
    from pushbench.tasks import load_tasks, manifest_path

    if not manifest_path("corpus").is_file() or not (config.HIDDEN / "corpus").is_dir():
        build_family("corpus")
    return load_tasks("corpus")


@pytest.fixture(scope="session")
def corpus_hidden(corpus_tasks: list[Any]) -> dict[str, dict[str, Any]]:
    """The hidden answers (tests play the verifier's part here)."""
    return {t.task_id: json.loads((config.HIDDEN / "corpus" / f"{t.task_id}.json").read_text()) for t in corpus_tasks}


@pytest.fixture(scope="session")
def corpus_family() -> Any:
    from pushbench.tasks import get_family

    return get_family("corpus")
