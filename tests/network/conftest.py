"""Fixtures for the network service's tests: admin and member clients, a recording
compute notifier, raw neutron error bodies, and the DHCP files of a network."""
from __future__ import annotations

import pytest

from network_helpers import Raw


class RecordingNotifier:
    """The test double for the compute notifier: remembers every event, in order."""

    def __init__(self):
        self.events: list[dict] = []

    def send(self, events):
        self.events.extend(events)

    def stop(self):
        pass

    def names_for(self, port_id: str) -> list[str]:
        return [e["name"] for e in self.events if e["tag"] == port_id]


@pytest.fixture
def recorder():
    from pocketstack.network import notifier

    double = RecordingNotifier()
    previous = notifier.set_notifier(double)
    try:
        yield double
    finally:
        notifier.set_notifier(previous)


@pytest.fixture(scope="session")
def admin_conn(cloud):
    return cloud.sdk()


@pytest.fixture
def member(cloud):
    """A fresh project with a member user: quotas and visibility start from scratch."""
    return cloud.make_user(roles=("member",))


@pytest.fixture
def member_conn(cloud, member):
    return cloud.user_sdk(member)


@pytest.fixture
def raw(cloud):
    return Raw(cloud.session())


@pytest.fixture
def member_raw(cloud, member):
    return Raw(cloud.user_session(member))
