"""Placement test helpers: a keystoneauth session that finds placement in the catalog
(endpoint_filter service_type=placement) and speaks a chosen microversion."""
from __future__ import annotations

import uuid

import pytest


class Placement:
    def __init__(self, session, version="1.39"):
        self.s = session
        self.version = version

    def req(self, method, path, json=None, version=None, headers=None, **kw):
        h = {"OpenStack-API-Version": f"placement {version or self.version}"}
        if version == "none":
            h = {}
        h.update(headers or {})
        return self.s.request(path, method, json=json, headers=h, raise_exc=False,
                              endpoint_filter={"service_type": "placement"}, **kw)

    def get(self, path, **kw):
        return self.req("GET", path, **kw)

    def put(self, path, json=None, **kw):
        return self.req("PUT", path, json=json, **kw)

    def post(self, path, json=None, **kw):
        return self.req("POST", path, json=json, **kw)

    def delete(self, path, **kw):
        return self.req("DELETE", path, **kw)

    def provider(self, name=None, parent=None, inventory=None, traits=None,
                 aggregates=None) -> str:
        """A new provider (unique name) with the given inventory, traits, aggregates."""
        body = {"name": name or f"rp-{uuid.uuid4().hex[:12]}"}
        if parent:
            body["parent_provider_uuid"] = parent
        r = self.post("/resource_providers", body)
        assert r.status_code == 200, r.text
        rp = r.json()["uuid"]
        if inventory:
            self.inventory(rp, inventory)
        if traits:
            gen = self.get(f"/resource_providers/{rp}").json()["generation"]
            r = self.put(f"/resource_providers/{rp}/traits",
                         {"traits": traits, "resource_provider_generation": gen})
            assert r.status_code == 200, r.text
        if aggregates:
            gen = self.get(f"/resource_providers/{rp}").json()["generation"]
            r = self.put(f"/resource_providers/{rp}/aggregates",
                         {"aggregates": aggregates, "resource_provider_generation": gen})
            assert r.status_code == 200, r.text
        return rp

    def inventory(self, rp, inventory: dict) -> None:
        gen = self.get(f"/resource_providers/{rp}").json()["generation"]
        inv = {rc: v if isinstance(v, dict) else {"total": v} for rc, v in inventory.items()}
        r = self.put(f"/resource_providers/{rp}/inventories",
                     {"inventories": inv, "resource_provider_generation": gen})
        assert r.status_code == 200, r.text

    def allocate(self, consumer, allocations, generation=None, **kw):
        return self.put(f"/allocations/{consumer}", {
            "allocations": {rp: {"resources": res} for rp, res in allocations.items()},
            "project_id": kw.get("project_id", "proj"), "user_id": kw.get("user_id", "user"),
            "consumer_generation": generation, "consumer_type": "INSTANCE"})


@pytest.fixture(scope="module")
def placement(cloud):
    return Placement(cloud.session())


@pytest.fixture
def new_uuid():
    return lambda: str(uuid.uuid4())
