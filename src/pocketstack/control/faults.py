"""Fault injection for the simulated cloud, in the spirit of CloudStack's simulator and
moto: rules say "make <operation> on <host> fail / hang N times", "drop the next build
message to <host>", "<host> is down". The fake driver and the compute agents consult
``check()``; the admin API under /pocketstack/v1/faults and the [fake] config manage them.

Rules live in the database so every process sees them. Each process caches the rule list
for a short time; ``check`` costs nothing when there are no rules, which is the common case.
"""
from __future__ import annotations

import threading
import time
import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, runtime
from pocketstack.common.timeutils import utcnow

OPERATIONS = ("spawn", "destroy", "power_off", "power_on", "reboot", "pause", "unpause",
              "suspend", "resume", "snapshot", "build_message", "allocate_network",
              "vif_plugged", "host", "prep_resize", "migrate_disk", "finish_migration",
              "finish_revert_migration", "attach_interface", "detach_interface",
              "prep_block_device", "attach_volume", "detach_volume")
ACTIONS = ("fail", "hang", "drop", "down")
CACHE_SECONDS = 0.5



class _FaultCache:
    """One cloud's fault rules (common/runtime.py)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.cache: tuple[float, list[dict]] | None = None
        self.generation = 0  # bumped by invalidate(): a reader that started before must not cache
        # A compute host without the database reads and takes its rules through the
        # conductor (compute/hostdb.py): (read_rules, consume_rule) replacements.
        self.remote: tuple | None = None


def use_remote(read, consume) -> None:
    """Read this process's rules with ``read()`` and take a use with ``consume(id)``."""
    st = _state()
    with st.lock:
        st.remote = (read, consume)
        st.generation += 1
        st.cache = None


def _state() -> _FaultCache:
    return runtime.current().slot(__name__, _FaultCache)


class InjectedFault(exceptions.PocketstackError):
    code = 500
    message = "Injected failure."


def invalidate() -> None:
    st = _state()
    with st.lock:
        st.generation += 1
        st.cache = None


def _rules() -> list[dict]:
    st = _state()
    cached = st.cache
    generation = st.generation
    if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
        return cached[1]
    rules = st.remote[0]() if st.remote is not None else read_rules()
    with st.lock:
        if generation == st.generation:  # else a rule changed while we read: stay uncached
            st.cache = (time.monotonic(), rules)
    return rules


def view(r) -> dict:
    return {"id": r.id, "host": r.host, "operation": r.operation, "action": r.action,
            "times": r.times, "hang_seconds": r.hang_seconds, "message": r.message,
            "hits": r.hits, "created_at": r.created_at.isoformat() if r.created_at else None}


def read_rules() -> list[dict]:
    from pocketstack.control.models import FaultRule

    with db.reader() as s:
        rows = s.scalars(sa.select(FaultRule).order_by(FaultRule.created_at)).all()
        return [view(r) for r in rows]


def _consume(rule_id: str) -> bool:
    remote = _state().remote
    if remote is None:
        return consume_rule(rule_id)
    taken = remote[1](rule_id)
    if taken:
        invalidate()  # the conductor's count moved: read the rules again
    return taken


def consume_rule(rule_id: str) -> bool:
    """Take one use of a counted rule atomically; False when another caller took the last."""
    from pocketstack.control.models import FaultRule

    with db.transaction() as s:
        row = s.get(FaultRule, rule_id)
        if row is None:
            return False
        if row.times is None:
            row.hits += 1
            return True
        result = s.execute(sa.update(FaultRule)
                           .where(FaultRule.id == rule_id, FaultRule.times > 0)
                           .values(times=FaultRule.times - 1, hits=FaultRule.hits + 1))
        if result.rowcount != 1:
            return False
        if row.times is not None and row.times - 1 <= 0:
            s.execute(sa.delete(FaultRule).where(FaultRule.id == rule_id,
                                                 FaultRule.times <= 0))
    invalidate()
    return True


def match(host: str, operation: str) -> dict | None:
    """The first rule for ``operation`` on ``host`` that still has uses, consumed."""
    rules = _rules()
    if not rules:
        return None
    for rule in rules:
        if rule["operation"] != operation or rule["host"] not in (None, host):
            continue
        if _consume(rule["id"]):
            return rule
    return None


def check(host: str, operation: str) -> None:
    """Raise, hang or pass according to the rules for ``operation`` on ``host``."""
    rule = match(host, operation)
    if rule is None:
        return
    if rule["action"] == "hang":
        time.sleep(rule["hang_seconds"] or 3600)
        return
    if rule["action"] == "fail":
        raise InjectedFault(rule["message"] or f"Injected {operation} failure on {host}")


def host_is_down(host: str) -> bool:
    return any(r["operation"] == "host" and r["action"] == "down" and r["host"] in (None, host)
               for r in _rules())


def add(host: str | None, operation: str, action: str, times: int | None = 1,
        hang_seconds: float = 0.0, message: str = "") -> dict:
    from pocketstack.control.models import FaultRule

    if operation not in OPERATIONS:
        raise exceptions.BadRequest(f"Unknown operation {operation!r}; one of "
                                    f"{', '.join(OPERATIONS)}.")
    if action not in ACTIONS:
        raise exceptions.BadRequest(f"Unknown action {action!r}; one of {', '.join(ACTIONS)}.")
    if (operation == "host") != (action == "down"):
        raise exceptions.BadRequest("Use operation 'host' with action 'down' (and only then).")
    if action == "drop" and operation != "build_message":
        raise exceptions.BadRequest("Only build_message can be dropped.")
    if times is not None and times < 1:
        raise exceptions.BadRequest("times must be at least 1 (or null for always).")
    rule = FaultRule(id=str(uuid.uuid4()), host=host, operation=operation, action=action,
                     times=None if action == "down" else times, hang_seconds=hang_seconds,
                     message=message or "", created_at=utcnow())
    with db.transaction() as s:
        s.add(rule)
        if action == "down":
            _mark_down(s, host)
    invalidate()
    return view(rule)


def _mark_down(s, host: str | None) -> None:
    """A host taken down stops heartbeating; backdate its last one so it is down now."""
    from pocketstack.compute.models import Service

    q = sa.update(Service).where(Service.binary == "nova-compute")
    if host:
        q = q.where(Service.host == host)
    s.execute(q.values(last_seen_up=None))


def list_rules() -> list[dict]:
    invalidate()
    return _rules()


def remove(rule_id: str) -> None:
    from pocketstack.control.models import FaultRule

    with db.transaction() as s:
        if s.execute(sa.delete(FaultRule).where(FaultRule.id == rule_id)).rowcount != 1:
            raise exceptions.NotFound(f"Fault rule {rule_id} could not be found.")
    invalidate()


def reset() -> int:
    from pocketstack.control.models import FaultRule

    with db.transaction() as s:
        count = s.execute(sa.delete(FaultRule)).rowcount
    invalidate()
    return count
