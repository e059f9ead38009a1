# The two commands: `make run` (the main job) and `make test`. Both set everything up first.
# `make check` runs the gates (ruff, mypy, lint-imports; their settings are in pyproject.toml).
# `make test-fast` leaves out the tests marked slow or spark, for development; CI runs
# `make check` and `make test` (.ci/run). `make docs` builds the documentation site into site/
# (mkdocs, warnings are errors).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PLUGINS := $(sort $(wildcard plugins/*/pyproject.toml))
PEERS  := $(sort $(wildcard plugins/*/test-peers-no-deps.txt))
STAMP  := $(VENV)/.assay-installed
DOCS_STAMP := $(VENV)/.assay-docs-installed

.PHONY: setup run test test-fast check bench docs clean

$(STAMP): pyproject.toml $(PLUGINS) $(PEERS) scripts/setup.sh
	@PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/setup.sh
	@touch $(STAMP)

setup: $(STAMP)

run: setup
	$(BIN)/assay demo

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: setup
	$(BIN)/python -m pytest -m "not slow and not spark" $(PYTEST_ARGS)

# Every gate runs, even after one fails, so one run lists every problem; any failure fails make.
check: setup
	@status=0; \
	echo "check: ruff check ."; $(BIN)/ruff check . || status=1; \
	echo "check: mypy"; $(BIN)/mypy || status=1; \
	echo "check: lint-imports"; $(BIN)/lint-imports || status=1; \
	exit $$status

bench: setup
	$(BIN)/python bench/run_all.py

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[docs]"
	touch $(DOCS_STAMP)

docs: setup $(DOCS_STAMP)
	$(BIN)/python -m mkdocs build --strict

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis demo-output site .ruff_cache .mypy_cache .import_linter_cache
