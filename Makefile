# Two commands on a fresh machine: `make run` and `make test`. See README.md.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
PG_URL ?= postgres://postgres@127.0.0.1:5432/flashcards
PYTEST_ARGS ?= -q

.PHONY: install lock run test test-postgres lint check format bench fuzz soak faults clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Installs exactly the locked versions, each checked against its hash (requirements-dev.lock:
# the runtime lock plus the test and lint tools).
$(VENV)/.installed: requirements-dev.lock | $(BIN)/python
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements-dev.lock
	touch $@

install: $(VENV)/.installed

## Regenerate the lock files (every transitive version, with hashes) from requirements*.txt.
lock: install
	$(BIN)/uv pip compile requirements.txt --generate-hashes --python-version 3.11 --no-header -o requirements.lock
	$(BIN)/uv pip compile requirements-dev.txt --generate-hashes --python-version 3.11 --no-header -o requirements-dev.lock

## Install, migrate the SQLite default, seed the demo workspace, print a login and a key, serve on :8000.
run: install
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	@DEBUG=1 $(BIN)/python manage.py seed_demo --print-login --print-key > .demo-seed.log
	@key=$$(tail -n 1 .demo-seed.log); login=$$(grep '^Login: ' .demo-seed.log | cut -d' ' -f2-); \
	rm -f .demo-seed.log; \
	echo; echo "Demo workspace ready."; \
	echo "  Browser login (new password each run): $$login"; \
	echo "    console http://$(HOST):$(PORT)/console/   API keys http://$(HOST):$(PORT)/account/api-keys/"; \
	echo "  API key (shown once, keep it): $$key"; echo; \
	echo "Try:"; \
	echo "  curl -s http://$(HOST):$(PORT)/v1/agent/sql -H 'Authorization: ApiKey $$key' -H 'Content-Type: application/json' -d '{\"sql\": \"SELECT card_id, front_text, tags FROM cards WHERE tags OVERLAP ('\''english'\'') LIMIT 5\"}'"; \
	echo; echo "Start page: http://$(HOST):$(PORT)/   Discovery: http://$(HOST):$(PORT)/v1/   Admin: http://$(HOST):$(PORT)/admin/   MCP: http://$(HOST):$(PORT)/mcp"; echo
	DEBUG=1 $(BIN)/uvicorn config.asgi:application --host $(HOST) --port $(PORT)

## Install and run the whole suite on SQLite (the default database).
test: install
	$(BIN)/pytest $(PYTEST_ARGS)

## The same suite against PostgreSQL (DATABASE_URL, default $(PG_URL)).
test-postgres: install
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/pytest $(PYTEST_ARGS)

## Style, types and layers: ruff (lint + format), mypy (strict on dsl.language and dsl.runtime),
## import-linter (the contracts in pyproject.toml, drawn in docs/architecture.md).
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy dsl flashcards config
	$(BIN)/lint-imports

## Before a commit: lint, then the fast tests (no browser, reliability or `slow` tests), in under two minutes.
check: lint
	$(BIN)/pytest -q -x -p no:cacheprovider -m "not slow" --ignore=tests/browser --ignore=tests/reliability

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Benchmarks, figures in docs/benchmarks.md: language overhead, the query mix on SQLite and
## PostgreSQL (seeds bench/bench.sqlite3 and the database fc_bench on first use), HTTP throughput.
bench: install
	$(BIN)/python -m bench.language
	BENCH_DB=sqlite $(BIN)/python -m bench.queries
	BENCH_DB=postgres $(BIN)/python -m bench.queries
	BENCH_DB=postgres $(BIN)/python -m bench.throughput

## Grammar-aware fuzzing of /v1/agent/sql, 100k cases per test (docs/reliability.md).
fuzz: install
	HYPOTHESIS_PROFILE=fuzz FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-100000} $(BIN)/pytest tests/reliability/test_fuzz.py -q --hypothesis-show-statistics

## 60 s of mixed load on the served app and a rate-limit burst, then 30 s of 8 concurrent
## writers on PostgreSQL (docs/reliability.md).
soak: install
	BENCH_DB=postgres $(BIN)/python -m bench.soak
	SOAK_SECONDS=$${SOAK_SECONDS:-30} DATABASE_URL=$${SOAK_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/fc_soak} \
		$(BIN)/pytest tests/reliability/test_concurrency.py -q -s

## The fault suite (docs/reliability.md): PostgreSQL refusing connections (behind a proxy the
## tests control), a paused and a killed Redis (their own redis-server), stalled clients, a killed
## supervisor; a few minutes. Needs PostgreSQL (DATABASE_URL, default $(PG_URL)).
faults: install
	FAULT_OUTAGE_SECONDS=$${FAULT_OUTAGE_SECONDS:-10} DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} \
		$(BIN)/pytest tests/reliability/faults -q -s -p no:cacheprovider

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
