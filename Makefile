# kaoshi developer entry points. Every target creates .venv on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STORE  ?= kaoshi_runs/demo.sqlite

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Stamps re-run the install when pyproject.toml changes.
$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

demo: $(VENV)/.core
	rm -f $(STORE) $(STORE)-wal $(STORE)-shm
	$(BIN)/kaoshi --store $(STORE) run --benchmark sample --model random --seed 7 --run-name demo-random
	$(BIN)/kaoshi --store $(STORE) report demo-random --by domain --by type

test: $(VENV)/.dev
	$(BIN)/python -m pytest -q

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests $(wildcard benchmarks)
	$(BIN)/ruff format --check src tests $(wildcard benchmarks)
	$(BIN)/mypy

bench: $(VENV)/.dev
	@ls benchmarks/*.py >/dev/null 2>&1 && for f in benchmarks/*.py; do $(BIN)/python $$f; done || echo "no benchmarks yet"

clean:
	rm -rf $(VENV) kaoshi_runs build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
