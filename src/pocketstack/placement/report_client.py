"""A compute host's report to placement over its REST API, as nova-compute's
SchedulerReportClient makes it (update_provider_tree → set_inventory_for_provider), with
the compute service user (``nova``): for a host without the database
([compute] database_access = conductor). The all-in-one reports in-process instead
(report.py: many hosts in a few statements); the rule for what a host writes is the same
one (report._inventory), so both leave the same rows.

Per host: GET the provider (404: POST it, with its traits, taking its name back from a
stale provider of a node made again, as report._drop_stale_names does), GET its
inventories, and PUT them only when something changed, with the provider's generation —
a 409 (an operator or another writer moved it) reads again and retries, as nova does.
Inventories of other classes (an operator's custom ones) are kept.
"""
from __future__ import annotations

import logging

from pocketstack.clients.base import Client
from pocketstack.common import exceptions
from pocketstack.placement.report import Host, _inventory

LOG = logging.getLogger(__name__)
MICROVERSION = {"OpenStack-API-Version": "placement 1.26"}  # reserved may equal total
_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
RETRIES = 3


class PlacementReportClient(Client):
    base_path = "/placement"

    def __init__(self):
        super().__init__(None, caller="compute")

    def _call(self, method: str, path: str, json=None, ok=(200, 201, 204), params=None):
        return self.request(method, path, json=json, headers=MICROVERSION, ok=ok,
                            params=params)

    def report(self, host: Host) -> None:
        """``host``'s provider, traits and inventories as placement should have them."""
        for attempt in range(RETRIES):
            try:
                self._report(host)
                return
            except exceptions.Conflict:  # a generation moved under us: read again
                if attempt == RETRIES - 1:
                    raise
                LOG.info("Placement provider %s changed meanwhile; reporting again",
                         host.uuid)

    def _report(self, host: Host) -> None:
        r = self._call("GET", f"/resource_providers/{host.uuid}", ok=(200, 404))
        if r.status_code == 404:
            generation = self._create(host)
            old: dict = {}
        else:
            body = self._call("GET", f"/resource_providers/{host.uuid}/inventories").json()
            generation, old = body["resource_provider_generation"], body["inventories"]
        want = dict(old)
        for rc in host.totals:
            want[rc] = _inventory(host, rc, old.get(rc))
        if all(rc in old and all(old[rc].get(k) == v[k] for k in _FIELDS)
               for rc, v in want.items()):
            return  # nothing changed: nothing written (the periodic run's usual case)
        self._call("PUT", f"/resource_providers/{host.uuid}/inventories", json={
            "resource_provider_generation": generation,
            "inventories": {rc: {k: v[k] for k in _FIELDS} for rc, v in want.items()}})

    def _create(self, host: Host) -> int:
        self._drop_stale_name(host)
        rp = self._call("POST", "/resource_providers",
                        json={"uuid": host.uuid, "name": host.name}).json()
        generation = rp["generation"]
        if host.traits:
            generation = self._call("PUT", f"/resource_providers/{host.uuid}/traits", json={
                "resource_provider_generation": generation,
                "traits": list(host.traits)}).json()["resource_provider_generation"]
        return generation

    def _drop_stale_name(self, host: Host) -> None:
        """A node made again (new uuid) under the host's name: its old provider goes if
        nothing is allocated on it, else it is renamed (its allocations stay visible)."""
        for rp in self._call("GET", "/resource_providers",
                             params={"name": host.name}).json()["resource_providers"]:
            if rp["name"] != host.name or rp["uuid"] == host.uuid:
                continue
            usages = self._call("GET", f"/resource_providers/{rp['uuid']}/usages").json()
            if not any(usages["usages"].values()):
                self._call("DELETE", f"/resource_providers/{rp['uuid']}", ok=(204, 404))
            else:
                LOG.warning("provider %s (%s) still has allocations: renamed", rp["name"],
                            rp["uuid"])
                self._call("PUT", f"/resource_providers/{rp['uuid']}", json={
                    "name": f"{rp['name'][:150]}-{rp['uuid']}"})


def report(hosts: list[Host]) -> None:
    client = PlacementReportClient()
    for host in hosts:
        client.report(host)
