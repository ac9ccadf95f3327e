# pocketstack: `make up` runs the cloud, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: up test bench clean libvirt

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip

$(VENV)/.installed: $(VENV)/bin/python pyproject.toml
	$(VENV)/bin/pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/bin/python pyproject.toml
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed

up: $(VENV)/.installed
	$(VENV)/bin/pocketstack up $(ARGS)

test: $(VENV)/.installed-test
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed-test
	$(PY) bench/identity_bench.py

# Real guests (issue 9): Debian's libvirt/QEMU, the tiny guest's kernel and busybox,
# virtlogd + libvirtd started (root; idempotent), libvirt-python in the venv.
libvirt: $(VENV)/bin/python
	tools/setup_libvirt.sh
	$(VENV)/bin/pip install -q -e '.[libvirt]'

clean:
	rm -rf $(VENV) build *.egg-info
