# Touchstone: `make demo` serves a demo campaign; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000

# The demo runs without TLS on a laptop: DEBUG on, SQLite under var/ and Celery tasks inline,
# unless DATABASE_URL / CELERY_BROKER_URL are set in the environment.
DEMO_ENV := DEBUG=$${DEBUG:-1}

.PHONY: demo test lint install migrate bench clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	mkdir -p var
	$(DEMO_ENV) $(BIN)/python manage.py migrate --noinput
	$(DEMO_ENV) $(BIN)/python manage.py load_demo
	$(DEMO_ENV) $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# The suite runs against PostgreSQL and Redis on 127.0.0.1 (see conftest.py for the defaults).
test: $(STAMP)
	$(BIN)/python -m pytest

# Lint: ruff (pyproject.toml), and no model change without its migration.
lint: $(STAMP)
	$(BIN)/ruff check .
	SECRET_KEY=lint DATABASE_URL=sqlite://:memory: $(BIN)/python manage.py makemigrations --check --dry-run

clean:
	rm -rf $(VENV) var
