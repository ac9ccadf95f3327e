"""The ``ks`` fixture: raw HTTP to the running cloud's Keystone API (identity_helpers)."""
import pytest

from identity_helpers import Keystone


@pytest.fixture(scope="session")
def ks(cloud):
    client = Keystone(cloud)
    yield client
    client.http.close()
