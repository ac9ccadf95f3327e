"""The Swift API checks shared with the RADOS Gateway backend
(tests/helpers/swift_client_checks.py and swift_feature_checks.py), against the
embedded object store."""
from __future__ import annotations

import pytest
from helpers import swift_client_checks as checks


@pytest.mark.parametrize("check", sorted(checks.all_checks()))
def test_embedded_backend(cloud, check):
    checks.all_checks()[check](cloud)
