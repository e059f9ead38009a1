# The two commands: `make run` (the main job) and `make test`. Both set everything up first.
# `make docs` builds the documentation site into site/ (mkdocs, warnings are errors).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PLUGINS := $(sort $(wildcard plugins/*/pyproject.toml))
STAMP  := $(VENV)/.assay-installed
DOCS_STAMP := $(VENV)/.assay-docs-installed

.PHONY: setup run test bench docs clean

$(STAMP): pyproject.toml $(PLUGINS) scripts/setup.sh
	@PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/setup.sh
	@touch $(STAMP)

setup: $(STAMP)

run: setup
	$(BIN)/assay demo

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: setup
	$(BIN)/python bench/run_all.py

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[docs]"
	touch $(DOCS_STAMP)

docs: setup $(DOCS_STAMP)
	$(BIN)/python -m mkdocs build --strict

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis demo-output site
