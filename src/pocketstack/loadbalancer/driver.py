"""The provider driver: applies each load balancer's pending change after the API has
answered, then flips the statuses (tree.settle), as Octavia's amphora driver does through
its controller worker. One thread per cloud process; a change made in this process wakes
it at once, one made by another API process is found by its periodic look.

The data plane: the simulated one (default) has nothing to build; the haproxy one
(dataplane.py, [loadbalancer] data_plane = haproxy) runs one HAProxy per load balancer
in a namespace, and its checks feed the members' operating status."""
from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import time

import sqlalchemy as sa

from pocketstack.common import config, db, processes, runtime
from pocketstack.common.timeutils import utcnow
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer import tree, vip

LOG = logging.getLogger(__name__)
CLAIM_TIMEOUT = 300.0  # seconds after which a claim is taken to be a dead driver's


class _State:
    def __init__(self):
        self.wake = threading.Event()
        self.idle = threading.Event()  # set while nothing is pending (for tests, benches)
        self.idle.set()
        self.data_plane = None


def _state() -> _State:
    return runtime.current().slot(__name__, _State)


def notify() -> None:
    state = _state()
    state.idle.clear()
    state.wake.set()


def wait_idle(timeout: float) -> bool:
    return _state().idle.wait(timeout)


def counters(lb_id: str, listener_id: str) -> dict | None:
    plane = _state().data_plane
    return plane.counters(lb_id, listener_id) if plane is not None else None


def _alive(pid: str) -> bool:
    return pid.isdigit() and (int(pid) == os.getpid() or processes.running(int(pid)))


class Driver:
    def __init__(self, data_dir: str):
        self.state = _state()
        self.data_dir = data_dir
        self.stopping = False
        self.last_health: dict[str, dict] = {}  # lb id -> the data plane's last report
        self.name = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.thread = threading.Thread(target=runtime.bind(self._run),
                                       name="loadbalancer-driver", daemon=True)

    def start(self) -> "Driver":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping = True
        self.state.wake.set()
        self.thread.join(10)
        if self.state.data_plane is not None:
            self.state.data_plane.stop()

    def _run(self) -> None:
        interval = config.CONF.loadbalancer.poll_interval
        try:
            self.release_dead_claims()
            self.restore()
        except Exception:  # noqa: BLE001 - the rest of the service still serves
            LOG.exception("Restoring the load balancers' data plane failed")
        while not self.stopping:
            self.state.wake.wait(interval)
            self.state.wake.clear()
            if self.stopping:
                return
            try:
                while self.apply_pending():
                    pass
                if not self.state.wake.is_set():
                    self.state.idle.set()
                if self.state.data_plane is not None:
                    self.refresh_health()
            except Exception:  # noqa: BLE001 - keep serving; the change stays pending
                LOG.exception("The load balancer provider failed to apply changes")

    def apply_pending(self) -> bool:
        """Apply every pending change this driver can claim; whether it applied any (the
        ones another driver holds are looked at again on the next round)."""
        with db.reader() as s:
            pending = list(s.scalars(sa.select(M.LoadBalancer.id).where(
                M.LoadBalancer.provisioning_status.in_(C.PENDING))))
        applied = False
        for lb_id in pending:
            if self.stopping:
                return False
            applied = self.apply(lb_id) or applied
        return applied

    def apply(self, lb_id: str) -> bool:
        if not self._claim(lb_id):
            return False  # another process's driver is applying it
        try:
            self._apply(lb_id)
        finally:
            self._release(lb_id)
        return True

    def _claim(self, lb_id: str) -> bool:
        """Take the load balancer's pending change for this driver: free, or held by a
        driver that has not finished in CLAIM_TIMEOUT (its process died)."""
        now = utcnow()
        stale = now - dt.timedelta(seconds=CLAIM_TIMEOUT)
        with db.transaction() as s:
            taken = s.execute(sa.update(M.LoadBalancer).where(
                M.LoadBalancer.id == lb_id,
                M.LoadBalancer.provisioning_status.in_(C.PENDING),
                sa.or_(M.LoadBalancer.claimed_by.is_(None),
                       M.LoadBalancer.claimed_at < stale))
                .values(claimed_by=self.name, claimed_at=now)).rowcount
        return taken == 1

    def release_dead_claims(self) -> int:
        """Free the claims of drivers of this host whose process is gone (a kill -9 in
        the middle of a change): their load balancers are applied now, not once the
        claim lapses. Returns how many were freed."""
        here = socket.gethostname() + ":"
        with db.transaction() as s:
            held = list(s.execute(sa.select(M.LoadBalancer.id, M.LoadBalancer.claimed_by)
                                  .where(M.LoadBalancer.claimed_by.like(here + "%"))))
            dead = [lb_id for lb_id, by in held if not _alive(by[len(here):].split(":")[0])]
            if dead:
                s.execute(sa.update(M.LoadBalancer).where(M.LoadBalancer.id.in_(dead))
                          .values(claimed_by=None, claimed_at=None))
        return len(dead)

    def _release(self, lb_id: str) -> None:
        with db.transaction() as s:
            s.execute(sa.update(M.LoadBalancer).where(
                M.LoadBalancer.id == lb_id, M.LoadBalancer.claimed_by == self.name)
                .values(claimed_by=None, claimed_at=None))

    def _apply(self, lb_id: str) -> None:
        delay = config.CONF.loadbalancer.provisioning_delay
        if delay:
            time.sleep(delay)
        with db.reader() as s:
            lb = s.get(M.LoadBalancer, lb_id)
            if lb is None or lb.provisioning_status not in C.PENDING:
                return
            deleting = lb.provisioning_status == C.PENDING_DELETE
            project_id = lb.project_id
            port_id = lb.vip_port_id if lb.vip_port_owned else None
        health, failed = None, None
        plane = self._plane()
        try:
            if deleting and self.state.data_plane is not None:
                self.state.data_plane.remove(lb_id)
            elif plane is not None:
                health = plane.apply(lb_id)
        except Exception as error:  # noqa: BLE001 - the change fails: ERROR, as Octavia
            LOG.exception("Applying load balancer %s failed", lb_id)
            failed = str(error)
        if deleting and failed is None:
            vip.delete_port(port_id)
            if self.state.data_plane is not None:
                vip.delete_security_group(lb_id, project_id)
        with db.transaction() as s:
            lb = s.get(M.LoadBalancer, lb_id)
            if lb is None:
                return
            if failed is not None:
                self._fail(s, lb)
            elif deleting:
                for model in reversed(tree.CHILDREN):
                    for obj in tree.rows(s, model, lb_id):
                        s.delete(obj)
                for amphora in s.scalars(sa.select(M.Amphora).where(
                        M.Amphora.load_balancer_id == lb_id)):
                    s.delete(amphora)
                s.delete(lb)
            else:
                tree.settle(s, lb, health)
            if (failed is not None or not deleting) and lb.claimed_by == self.name:
                # free in the commit that settles it: whoever sees it ACTIVE or ERROR
                # sees it unclaimed (apply's _release after it finds nothing to do)
                lb.claimed_by, lb.claimed_at = None, None
        self.last_health.pop(lb_id, None)

    def _plane(self):
        """The haproxy data plane when configured (read at each change, so a running
        cloud can switch); once made it stays, to remove what it built."""
        if config.CONF.loadbalancer.data_plane != "haproxy":
            return None
        if self.state.data_plane is None:
            from pocketstack.loadbalancer import dataplane  # noqa: PLC0415 (only when used)

            self.state.data_plane = dataplane.HAProxyPlane(self.data_dir)
        return self.state.data_plane

    @staticmethod
    def _fail(s, lb) -> None:
        for model in tree.CHILDREN:
            for obj in tree.rows(s, model, lb.id):
                if obj.provisioning_status in C.PENDING:
                    obj.provisioning_status = C.ERROR
        lb.provisioning_status = C.ERROR

    def restore(self) -> int:
        """Build again what the data plane lost while the cloud was away (a host reboot
        takes the namespaces and HAProxies): every ACTIVE load balancer it had built
        whose HAProxy is gone. Returns how many were rebuilt."""
        plane = self._plane()
        if plane is None:
            return 0
        with db.reader() as s:
            active = list(s.scalars(sa.select(M.LoadBalancer.id).where(
                M.LoadBalancer.provisioning_status == C.ACTIVE)))
        rebuilt = 0
        for lb_id in active:
            if not plane.built(lb_id) or plane.running(lb_id):
                continue
            LOG.info("Load balancer %s lost its HAProxy: building it again", lb_id)
            try:
                health = plane.apply(lb_id)
            except Exception:  # noqa: BLE001 - the others are still restored
                LOG.exception("Rebuilding load balancer %s failed", lb_id)
                continue
            rebuilt += 1
            with db.transaction() as s:
                lb = s.get(M.LoadBalancer, lb_id)
                if lb is not None and lb.provisioning_status == C.ACTIVE:
                    tree.operate(s, lb, health)
        return rebuilt

    def refresh_health(self) -> None:
        """The data plane's view of the members (its checks), written where it changed."""
        plane = self.state.data_plane
        with db.reader() as s:
            active = list(s.scalars(sa.select(M.LoadBalancer.id).where(
                M.LoadBalancer.provisioning_status == C.ACTIVE)))
        seen = self.last_health
        for lb_id in active:
            health = plane.health(lb_id)
            if not health or seen.get(lb_id) == health:
                continue  # nothing new: no write (a transaction a second per load balancer)
            seen[lb_id] = health
            with db.transaction() as s:
                lb = s.get(M.LoadBalancer, lb_id)
                if lb is not None and lb.provisioning_status == C.ACTIVE:
                    tree.operate(s, lb, health)
