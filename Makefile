# Two entry points: `make repro` (the whole pipeline) and `make test` (the test suite).
# Each creates .venv if missing and installs the pinned dependencies first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PIP_QUIET := 2>&1 | { grep -v "is ignored" || true; }

.PHONY: install test repro bench clean-venv

$(STAMP): requirements.lock pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.lock $(PIP_QUIET)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -e . $(PIP_QUIET)
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	touch $(STAMP)

install: $(STAMP)

test: install
	test -d snapshots/src/requests || $(PY) -m pushbench.snapshots  # so snapshot-backed tests run, not skip
	test -f data/corpus/documents.jsonl || $(PY) -m pushbench.tasks.corpus.build  # the corpus family's corpus
	$(PY) -m pushbench.manifests  # the task manifests the agent-layer tests use (about a minute: SWE-lite re-runs its unit tests)
	$(PY) -m pytest -n 2 tests

repro: install
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/dvc repro
	$(PY) -m pushbench.readme  # the result tables in README.md and docs/*.md = the regenerated paper_figures tables

bench: install
	$(PY) benchmarks/run_all.py

clean-venv:
	rm -rf $(VENV)
