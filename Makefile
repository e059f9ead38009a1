# The two commands: `make run` (the main job) and `make test`. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PLUGINS := $(sort $(wildcard plugins/*/pyproject.toml))
STAMP  := $(VENV)/.assay-installed

.PHONY: setup run test bench clean

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

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis demo-output
