"""Exceptions of the compute host's work on a server, below the manager's modules so any
of them can raise one (network.py raises Superseded, build.py catches it)."""
from __future__ import annotations


class Superseded(Exception):
    """The server was deleted or rescheduled while this host worked on it."""


class PortBindingFailed(Exception):
    """The network service bound a server's port as binding_failed on this host (its
    agent maps no interface to the port's physical network): rescheduled."""
