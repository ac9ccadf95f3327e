"""What the object storage tests share (a module of its own: ``from conftest import`` is
ambiguous where several conftests load)."""
from __future__ import annotations


def endpoint(session) -> str:
    return session.get_endpoint(service_type="object-store", interface="public")


def connect(session):
    import swiftclient

    return swiftclient.Connection(preauthurl=endpoint(session),
                                  preauthtoken=session.get_token(), retries=0)


class Holder:
    def __init__(self, cloud, user, session):
        self.user, self.session = user, session
        self.url = endpoint(session)
        self.token = session.get_token()
        self.swift = connect(session)
        self.headers = {"X-Auth-Token": self.token}


