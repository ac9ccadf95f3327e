# pocketstack: `make up` starts the cloud in the background, `make down` stops it,
# `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: up down test bench clean libvirt ceph

$(VENV)/bin/python:
	@echo "== creating $(VENV) (a Python virtual environment for pocketstack and its clients)"
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip

# pocketstack and the openstack CLI (the `cli` extra) that the README's commands use.
# Byte-compiled now: with PYTHONDONTWRITEBYTECODE set (common in containers and CI) an
# editable install would otherwise compile every module at every start (~0.2 s).
$(VENV)/.installed: $(VENV)/bin/python pyproject.toml
	@echo "== installing pocketstack and the openstack CLI into $(VENV) (1-2 min the first time, quiet)"
	$(VENV)/bin/pip install -q -e '.[cli]'
	$(PY) -m compileall -q src
	touch $@

$(VENV)/.installed-test: $(VENV)/bin/python pyproject.toml
	@echo "== installing pocketstack with its test dependencies into $(VENV) (2-3 min the first time, quiet)"
	$(VENV)/bin/pip install -q -e '.[test,cli]'
	$(PY) -m compileall -q src
	touch $@ $(VENV)/.installed

up: $(VENV)/.installed
	@echo "== starting the cloud in the background (a few seconds)"
	$(VENV)/bin/pocketstack up --detach $(ARGS)
	@echo "Next: source $(VENV)/bin/activate   # puts pocketstack and openstack on your PATH"

down:
	$(VENV)/bin/pocketstack down

# Three workers, each taking whole files (module fixtures stay in one process): most tests
# wait on a cloud, a CLI or a guest rather than compute, so on two cores two workers left
# the machine at a load of 1.5-3 and a third finishes sooner still. TEST_WORKERS=0 runs
# them in one process. Files go out in the order tests/conftest.py sorts them, the longest
# first (--no-loadscope-reorder: xdist would otherwise send the files with the most tests
# first, and the 16-minute README run started last). A worker that crashes ends the run,
# naming its test: pytest-xdist
# 3.8 can wait forever for the replacement of a crashed worker under --dist loadfile.
TEST_WORKERS ?= 3
# A worker that died in a Ceph test left what librados printed (tests/ceph/conftest.py).
# ruff first (pyproject.toml's [tool.ruff]): a lint error stops the run before the tests.
test: $(VENV)/.installed-test
	$(VENV)/bin/ruff check src tests bench tools
	$(PY) -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --max-worker-restart=0) $(PYTEST_ARGS) || { \
	  status=$$?; for f in $${TMPDIR:-/tmp}/pocketstack-test-stderr-*.log; do \
	    [ -f "$$f" ] && { echo "== stderr of the worker that died in $$(head -n 1 "$$f")"; tail -n 60 "$$f"; rm -f "$$f"; }; \
	  done; exit $$status; }

bench: $(VENV)/.installed-test
	$(PY) bench/identity_bench.py

# Real guests: Debian's libvirt/QEMU, the tiny guest's kernel and busybox,
# virtlogd + libvirtd started (root; idempotent), libvirt-python in the venv.
libvirt: $(VENV)/bin/python
	tools/setup_libvirt.sh
	@echo "== installing libvirt-python into $(VENV)"
	$(VENV)/bin/pip install -q -e '.[libvirt]'

# Storage every host shares: Debian's Ceph, QEMU's rbd driver, tgt, the rados/rbd
# bindings linked into the venv; then the data dir's one-node cluster, and the cloud set
# to keep images, volumes and instance disks there (restart it if it is running).
ceph: $(VENV)/.installed
	tools/setup_ceph.sh $(VENV)
	@echo "== starting the data dir's one-node Ceph cluster (about a minute)"
	$(VENV)/bin/pocketstack ceph start --use

clean:
	rm -rf $(VENV) build *.egg-info
