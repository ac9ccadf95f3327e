"""Fixtures of the `pocketstack up` process tests."""
from __future__ import annotations

import shutil
import tempfile

import pytest


@pytest.fixture
def root(request):
    """A fresh directory for the test's data dirs and configs, removed afterwards: short,
    under /tmp (the cloud's Unix sockets live in it), named after the test module."""
    path = tempfile.mkdtemp(prefix=request.module.__name__.rpartition(".")[2] + "-")
    yield path
    shutil.rmtree(path, ignore_errors=True)
