# Two entry points: `make repro` (the whole pipeline) and `make test` (the test suite).
# Each creates .venv if missing and installs the pinned dependencies first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PIP_QUIET := 2>&1 | { grep -v "is ignored" || true; }

.PHONY: install test repro bench fuzz clean-venv

$(STAMP): requirements.lock pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.lock $(PIP_QUIET)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -e . $(PIP_QUIET)
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	touch $(STAMP)

install: $(STAMP)

test: install
	test -d snapshots/src/requests || $(PY) -m pushbench.snapshots  # so snapshot-backed tests run, not skip
	$(PY) -m pushbench.manifests  # the task manifests the agent-layer tests use (about a minute: SWE-lite re-runs its unit tests)
	$(PY) -m pytest -n 2 tests

repro: install
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/dvc repro
	$(PY) -m pushbench.readme  # the result tables in README.md and docs/*.md = the regenerated paper_figures tables

bench: install
	$(PY) benchmarks/run_all.py

fuzz: install  # the full fuzz profile (over 100,000 tool calls); prints the counts per family
	test -d snapshots/src/requests || $(PY) -m pushbench.snapshots
	test -f data/manifests/swe.jsonl || $(PY) -m pushbench.manifests
	PUSHBENCH_FUZZ=full $(PY) -m pytest tests/fuzz

clean-venv:
	rm -rf $(VENV)
