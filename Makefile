# Herald — developer entry points. Every target installs what it needs first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export AWS_DEFAULT_REGION ?= us-east-1
export SAM_CLI_TELEMETRY := 0

.PHONY: run test lint typecheck validate build invoke bench time-order bench-health load screenshots chromium clean

$(STAMP): requirements-dev.txt constraints.txt layers/herald/requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

## run: start the whole stack locally (moto, HTTP API, pollers, provider sandbox); Ctrl-C stops it (make run ARGS=--verbose: every log line on the console)
run: $(STAMP)
	$(BIN)/python -m herald_local $(ARGS)

## test: lint, type-check, validate the template, then unit, integration, end-to-end and browser tests
# Three workers on two cores, each taking whole files: the end-to-end files share out across them
# (a session stack per worker) instead of queueing on one worker, since they mostly wait on their
# stacks (pytest 659 s here; CI took 1 239-1 257 s in all with every end-to-end test on one worker).
test: $(STAMP) chromium lint typecheck
	HERALD_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest -n 3 --dist loadfile

CHROMIUM ?= /usr/bin/chromium
## chromium: the browser tests drive the OS's Chromium (no browser download exists); installed with apt-get where root on Debian
chromium:
	@test -x $(CHROMIUM) || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; } || \
	  { echo "The console's browser tests need Chromium at $(CHROMIUM): install it (Debian: apt-get install chromium) or run make test CHROMIUM=/path/to/chromium"; exit 1; }
	@test -x $(CHROMIUM) || { echo "Chromium is still missing at $(CHROMIUM)"; exit 1; }

## screenshots: regenerate docs/console/*.png (the console's browser tests against a fresh local stack)
screenshots: $(STAMP) chromium
	HERALD_CONSOLE_SCREENSHOTS=docs/console HERALD_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest tests/e2e/test_console.py tests/e2e/test_console_*.py -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy
	@# Each function folder is its own top level (every handler is an `app` module): one run each.
	for fn in functions/*/; do MYPYPATH=layers/herald:$$fn $(BIN)/mypy $$fn*.py || exit 1; done

## validate: SAM and CloudFormation linting of template.yaml
validate: $(STAMP)
	$(BIN)/sam validate --lint
	$(BIN)/cfn-lint template.yaml

## build: sam build (needs python3.12 on PATH, e.g. PYENV_VERSION=3.12.1)
build: $(STAMP)
	$(BIN)/sam build

## invoke: run one function on one event against the running local stack (make invoke FN=ApiFunction EVENT=events/api/ping.json [ARGS="--local-dir DIR --verbose"])
invoke: $(STAMP)
	$(BIN)/python -m herald_local.invoke $(FN) $(EVENT) $(ARGS)

## bench: measure the accept and delivery paths (AWS calls, latency) against moto
bench: $(STAMP)
	$(BIN)/python -m bench

## time-order: scheduled sends and ordering keys through local stacks (units, order per key, start delays, cancel race); writes docs/time-order-results.json
time-order: $(STAMP)
	$(BIN)/python -m bench.time_order --out docs/time-order-results.json
## bench-health: provider and endpoint outages through two fresh local stacks, circuit breakers on and off (a few minutes)
bench-health: $(STAMP)
	$(BIN)/python -m bench.health

## load: 10 000 mixed notifications through a fresh local stack; prints, writes docs/load-results.json and the figures of docs/load.md
load: $(STAMP)
	$(BIN)/python -m bench.load --jobs 10000 --out docs/load-results.json
	$(BIN)/python -m bench.load_page

clean:
	rm -rf $(VENV) .aws-sam .herald-local .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
