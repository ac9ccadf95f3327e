"""The libvirt connection of one compute agent and its lifecycle events (nova's
virt/libvirt/host.py in small).

libvirt-python is imported here and only here, lazily, so pocketstack works without it.
One process-wide thread runs libvirt's default event loop; every Host registers a
lifecycle callback on its connection and wakes whoever waits for a guest to reach a state
(spawn waits for RUNNING, a clean shutdown for SHUTOFF). Waiters re-check the domain's
state after every event and at least once a second, so a missed event costs at most that.
"""
from __future__ import annotations

import logging
import threading
import time

from pocketstack.common import exceptions

LOG = logging.getLogger(__name__)

_event_loop_lock = threading.Lock()
_event_loop_started = False


class LibvirtUnavailable(Exception):
    pass


class GuestError(exceptions.PocketstackError):
    """libvirt or QEMU refused an operation on a guest."""
    code = 500


def import_libvirt():
    try:
        import libvirt
    except ImportError:
        raise LibvirtUnavailable(
            "libvirt-python is not installed: pip install 'pocketstack[libvirt]' (needs the "
            "libvirt-dev and pkg-config packages to build; `make libvirt` installs them)"
        ) from None
    return libvirt


def _start_event_loop(libvirt) -> None:
    """libvirt's default event implementation, driven by one daemon thread. Must be
    registered before the first connection that wants events is opened."""
    global _event_loop_started
    with _event_loop_lock:
        if _event_loop_started:
            return
        libvirt.virEventRegisterDefaultImpl()
        # libvirt prints every error to stderr by default; ours are raised with context.
        libvirt.registerErrorHandler(lambda _ctx, _error: None, None)

        def run():
            while True:
                try:
                    libvirt.virEventRunDefaultImpl()
                except Exception:  # noqa: BLE001 - the loop must outlive one bad callback
                    LOG.exception("libvirt event loop iteration failed")
                    time.sleep(0.1)

        threading.Thread(target=run, name="libvirt-events", daemon=True).start()
        _event_loop_started = True


class Host:
    def __init__(self, uri: str):
        self.libvirt = import_libvirt()
        self.uri = uri
        self._conn = None
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._events: dict[str, int] = {}  # uuid -> events seen (wakes waiters)
        self.listeners: list = []          # callables (uuid, event name) for other uses

    # --- connection --------------------------------------------------------------------

    def conn(self):
        with self._lock:
            if self._conn is not None:
                try:
                    if self._conn.isAlive():
                        return self._conn
                except self.libvirt.libvirtError:
                    pass
                LOG.warning("libvirt connection to %s was lost; reconnecting", self.uri)
            _start_event_loop(self.libvirt)
            try:
                conn = self.libvirt.open(self.uri)
            except self.libvirt.libvirtError as error:
                raise LibvirtUnavailable(f"cannot connect to libvirt at {self.uri}: "
                                         f"{error.get_error_message()}") from None
            try:
                conn.domainEventRegisterAny(None,
                                            self.libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                            self._on_lifecycle, None)
            except self.libvirt.libvirtError as error:  # a driver without events
                LOG.warning("libvirt lifecycle events unavailable: %s", error)
            self._conn = conn
            return conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                except Exception:  # noqa: BLE001
                    pass
                self._conn = None

    # --- domains -----------------------------------------------------------------------

    def release_unused_secrets(self, uuids) -> None:
        """Undefine those of the secrets ``uuids`` (a volume's CHAP or LUKS secrets) that
        no domain on this host refers to any more."""
        if not uuids:
            return
        conn = self.conn()
        used = "".join(dom.XMLDesc(0) for dom in conn.listAllDomains())
        for uuid in (u for u in uuids if u not in used):
            try:
                conn.secretLookupByUUIDString(uuid).undefine()
            except self.libvirt.libvirtError:
                pass  # already gone

    def lookup(self, uuid: str):
        """The domain of instance ``uuid`` or None."""
        try:
            return self.conn().lookupByUUIDString(uuid)
        except self.libvirt.libvirtError as error:
            if error.get_error_code() == self.libvirt.VIR_ERR_NO_DOMAIN:
                return None
            raise

    def state(self, dom) -> int:
        """libvirt's VIR_DOMAIN_* state; NOSTATE if the domain vanished meanwhile."""
        try:
            return dom.state()[0]
        except self.libvirt.libvirtError:
            return self.libvirt.VIR_DOMAIN_NOSTATE

    # --- events ------------------------------------------------------------------------

    def _on_lifecycle(self, conn, dom, event, detail, opaque):
        try:
            uuid = dom.UUIDString()
        except Exception:  # noqa: BLE001
            return
        with self._cond:
            self._events[uuid] = self._events.get(uuid, 0) + 1
            self._cond.notify_all()
        for listener in list(self.listeners):
            try:
                listener(uuid, event)
            except Exception:  # noqa: BLE001
                LOG.exception("lifecycle listener failed")

    def wait_for_state(self, dom, states: tuple[int, ...], timeout: float) -> bool:
        """Wait until the domain is in one of ``states`` (libvirt's), woken by its
        lifecycle events; False after ``timeout`` seconds."""
        uuid = dom.UUIDString()
        deadline = time.monotonic() + timeout
        while True:
            with self._cond:
                seen = self._events.get(uuid, 0)
            # The state is read outside the lock: the event thread must never wait on a
            # libvirt call of ours.
            if self.state(dom) in states:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with self._cond:
                self._cond.wait_for(lambda: self._events.get(uuid, 0) != seen,
                                    timeout=min(left, 1.0))
