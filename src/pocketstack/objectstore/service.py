"""The object store's background work in the cloud's main process: at start and then
hourly, remove what crashed uploads left; every [objectstore] expirer_interval seconds,
remove objects past their X-Delete-At from listings, usage and disk (reads refuse them
at once)."""
from __future__ import annotations

import logging
import threading
import time

from pocketstack.common import config, rgw, runtime
from pocketstack.objectstore import api, store

LOG = logging.getLogger(__name__)


class Expirer:
    def __init__(self):
        self._stop = threading.Event()
        self._runtime = runtime.current()
        self._thread = threading.Thread(target=self._run, name="object-expirer", daemon=True)
        self._thread.start()

    SWEEP_INTERVAL = 3600  # seconds between sweeps after the one at start

    def _run(self) -> None:
        with self._runtime.activated():
            swept = 0.0
            while True:
                if not swept or time.monotonic() - swept > self.SWEEP_INTERVAL:
                    swept = time.monotonic()
                    _sweep()
                if self._stop.wait(config.CONF.objectstore.expirer_interval):
                    return
                try:
                    expire_now()
                except Exception:  # noqa: BLE001 - try again next round
                    LOG.exception("Object expirer failed")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def _sweep() -> None:
    try:
        removed = store.sweep(api.all_files)
        if removed:
            LOG.info("Object store: removed %d files of cut-short uploads", removed)
    except Exception:  # noqa: BLE001 - the sweep is housekeeping; serving goes on
        LOG.exception("Object store sweep failed")


def expire_now() -> int:
    """Remove every object past its X-Delete-At; how many."""
    count = 0
    while True:
        files = api.expire(time.time())
        for file_id in files:
            store.remove(file_id)
        count += len(files)
        if len(files) < 500:
            return count


class Gateway:
    """The cloud's own radosgw ([objectstore] backend = rgw, no rgw_url): started with the
    cloud, stopped with it."""

    def __init__(self):
        from pocketstack.clients import service_users

        identity = (config.CONF.service_user.auth_url
                    or config.public_url() + "/identity").removesuffix("/v3")
        try:
            rgw.start(identity, service_users.password("swift"))
        except rgw.GatewayError as error:
            raise config.ConfigError(f"[objectstore] backend = rgw: {error}") from None

    def stop(self) -> None:
        rgw.stop()


def start(cloud) -> list:
    if getattr(cloud, "api_worker", False):  # the main process does the housekeeping
        return []
    workers = [Expirer()]
    if rgw.enabled() and not config.CONF.objectstore.rgw_url:
        try:
            workers.append(Gateway())
        except BaseException:
            workers[0].stop()
            raise
    return workers
