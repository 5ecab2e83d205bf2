# Touchstone: `make demo` serves a demo campaign; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000

# The demo runs without TLS on a laptop: DEBUG on, SQLite under var/ and Celery tasks inline,
# unless DATABASE_URL / CELERY_BROKER_URL are set in the environment.
DEMO_ENV := DEBUG=$${DEBUG:-1}

# `make cli`: the command line on PostgreSQL (README: "A campaign from the command line"). touchstone.env keeps
# DATABASE_URL (the environment's when set, else a local database `touchstone`) and a SECRET_KEY made once;
# .venv/bin/touchstone is manage.py with that file (touchstone/cli.sh).
ENV_FILE := touchstone.env
CLI_DATABASE_URL := $(or $(DATABASE_URL),postgres://postgres@127.0.0.1:5432/touchstone)

.PHONY: demo cli test lint install migrate bench clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	# irrCAC (the tests' reference for Gwet's AC1) pins scipy 1.12, which cannot load beside NumPy 2; it uses only
	# what SciPy still has, so it goes in without its pins.
	$(BIN)/pip install --quiet --no-deps irrCAC==0.4.4
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	mkdir -p var
	$(DEMO_ENV) $(BIN)/python manage.py create_database
	$(DEMO_ENV) $(BIN)/python manage.py migrate --noinput
	$(DEMO_ENV) $(BIN)/python manage.py load_demo --port $(PORT)
	$(DEMO_ENV) $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

cli: $(STAMP) $(ENV_FILE)
	mkdir -p var
	cmp -s touchstone/cli.sh $(BIN)/touchstone || install -m 755 touchstone/cli.sh $(BIN)/touchstone
	$(BIN)/touchstone create_database
	$(BIN)/touchstone migrate --noinput
	@echo "ready: .venv/bin/touchstone COMMAND is manage.py COMMAND with the settings in $(ENV_FILE)"

# Written once and then kept: a new key would log everyone out, and the file may have been edited since.
$(ENV_FILE): | $(STAMP)
	@umask 077 && { \
	  echo "# Written by make cli, read by .venv/bin/touchstone: NAME=value, taken literally; the environment wins."; \
	  echo "DATABASE_URL=$(CLI_DATABASE_URL)"; \
	  echo "SECRET_KEY=$$($(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(50))')"; \
	} > $@.tmp && mv $@.tmp $@
	@echo "wrote $@: DATABASE_URL and a new SECRET_KEY"

# The suite runs against PostgreSQL and Redis on 127.0.0.1 (see conftest.py for the defaults).
test: $(STAMP)
	$(BIN)/python -m pytest

# Lint: ruff and mypy (both configured in pyproject.toml), and no model change without its migration.
lint: $(STAMP)
	$(BIN)/ruff check .
	SECRET_KEY=lint DATABASE_URL=sqlite://:memory: $(BIN)/mypy
	SECRET_KEY=lint DATABASE_URL=sqlite://:memory: $(BIN)/python manage.py makemigrations --check --dry-run

clean:
	rm -rf $(VENV) var
