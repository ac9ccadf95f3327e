"""Which hosts have a live Linux bridge agent (their ports are plugged into bridges), from
the agents' heartbeats. A module of its own: the agent package and the API both ask, and
it needs only the agents' table (network/agents.py serves the API)."""
from __future__ import annotations

import datetime as dt
import time

import sqlalchemy as sa

from pocketstack.common import config, db, runtime
from pocketstack.common.timeutils import utcnow
from pocketstack.network.models import NetworkAgent

LINUXBRIDGE_AGENT = "Linux bridge agent"


class _HostsCache:
    def __init__(self):
        self.at, self.hosts = -1.0, frozenset()


def bridge_agent_hosts(session=None) -> set[str]:
    """Hosts with a live Linux bridge agent: their ports are plugged into bridges. With
    the caller's ``session`` read now; without, at most a second old (the API asks on
    every change, to tell each agent)."""
    if session is not None:
        return _bridge_agent_hosts(session)
    cache = runtime.current().slot(__name__ + ".hosts", _HostsCache)
    if time.monotonic() - cache.at > 1.0:
        with db.reader() as s:
            cache.hosts = frozenset(_bridge_agent_hosts(s))
        cache.at = time.monotonic()
    return set(cache.hosts)


def forget() -> None:
    """An agent came (or came back): the next question reads the table again, so a port
    bound to its host at once is plugged there."""
    runtime.current().slot(__name__ + ".hosts", _HostsCache).at = -1.0


def _live_bridge_agents():
    """The live Linux bridge agents' rows (a heartbeat within agent_down_time)."""
    since = utcnow() - dt.timedelta(seconds=config.CONF.network.agent_down_time)
    return (NetworkAgent.agent_type == LINUXBRIDGE_AGENT,
            NetworkAgent.heartbeat_timestamp >= since)


def _bridge_agent_hosts(s) -> set[str]:
    return set(s.scalars(sa.select(NetworkAgent.host).where(*_live_bridge_agents())))


def interface_mappings(host: str, session) -> dict:
    """physical network -> interface, as ``host``'s live Linux bridge agent reports."""
    configurations = session.scalar(sa.select(NetworkAgent.configurations).where(
        *_live_bridge_agents(), NetworkAgent.host == host))
    mappings = (configurations or {}).get("interface_mappings")
    return mappings if isinstance(mappings, dict) else {}


def tunneling_ip(configurations) -> str | None:
    """The VTEP an agent reports in its ``configurations``, if any."""
    value = (configurations or {}).get("tunneling_ip")
    return value if isinstance(value, str) and value else None


def tunnel_endpoints(s) -> dict[str, str]:
    """host -> its VTEP (the ``tunneling_ip`` its live Linux bridge agent reports)."""
    rows = s.execute(sa.select(NetworkAgent.host, NetworkAgent.configurations)
                     .where(*_live_bridge_agents()))
    return {host: address for host, configurations in rows
            if (address := tunneling_ip(configurations)) is not None}
