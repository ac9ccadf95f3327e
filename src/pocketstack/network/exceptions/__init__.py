"""Neutron's exceptions, by neutron's names: the class name is the ``type`` clients see in
``{"NeutronError": {"type", "message", "detail"}}``; the base class picks the status.
Messages follow neutron-lib's wording so people can search for them.

One module a noun (``common``, ``networks``, ``ports``, ``l3``, ``security_groups``,
``services``); this package gathers them so callers keep ``exc.SomeError``.
"""
from pocketstack.network.exceptions.common import *  # noqa: F403
from pocketstack.network.exceptions.l3 import *  # noqa: F403
from pocketstack.network.exceptions.networks import *  # noqa: F403
from pocketstack.network.exceptions.ports import *  # noqa: F403
from pocketstack.network.exceptions.security_groups import *  # noqa: F403
from pocketstack.network.exceptions.services import *  # noqa: F403
