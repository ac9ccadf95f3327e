"""The Swift API checks shared with the RADOS Gateway backend
(tests/helpers/swift_client_checks.py), against the embedded object store."""
from __future__ import annotations

import pytest
from helpers import swift_client_checks as checks


@pytest.mark.parametrize("check", sorted(checks.CHECKS))
def test_embedded_backend(cloud, check):
    checks.CHECKS[check](cloud)
