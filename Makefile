# pocketstack: `make up` starts the cloud in the background, `make down` stops it,
# `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: up down test bench clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip

# pocketstack and the openstack CLI (the `cli` extra) that the README's commands use.
$(VENV)/.installed: $(VENV)/bin/python pyproject.toml
	$(VENV)/bin/pip install -q -e '.[cli]'
	touch $@

$(VENV)/.installed-test: $(VENV)/bin/python pyproject.toml
	$(VENV)/bin/pip install -q -e '.[test,cli]'
	touch $@ $(VENV)/.installed

up: $(VENV)/.installed
	$(VENV)/bin/pocketstack up --detach $(ARGS)
	@echo "Next: source $(VENV)/bin/activate   # puts pocketstack and openstack on your PATH"

down:
	$(VENV)/bin/pocketstack down

test: $(VENV)/.installed-test
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed-test
	$(PY) bench/identity_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
