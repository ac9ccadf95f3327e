"""The DNS API (designate v2) as the network service calls it to publish floating IPs'
records, as neutron's designate driver does."""
from __future__ import annotations

from pocketstack.clients.base import Client

ALL_PROJECTS = {"X-Auth-All-Projects": "true"}


class DNSClient(Client):
    base_path = "/dns/v2"

    def __init__(self, ctx=None, *, all_projects: bool = False, project_id: str | None = None,
                 **kwargs):
        """``project_id``: act as that project (X-Auth-Sudo-Project-Id, admins only)."""
        super().__init__(ctx, **kwargs)
        self.extra = dict(ALL_PROJECTS) if all_projects else {}
        if project_id:
            self.extra["X-Auth-Sudo-Project-Id"] = project_id

    def create_zone(self, body: dict) -> dict:
        return self.request("POST", "/zones", json=body, headers=self.extra).json()

    def find_zone(self, name: str) -> dict | None:
        zones = self.request("GET", "/zones", params={"name": name},
                             headers=self.extra).json()["zones"]
        return zones[0] if zones else None

    def find_recordset(self, zone_id: str, name: str, rtype: str) -> dict | None:
        found = self.request("GET", f"/zones/{zone_id}/recordsets",
                             params={"name": name, "type": rtype},
                             headers=self.extra).json()["recordsets"]
        return found[0] if found else None

    def create_recordset(self, zone_id: str, body: dict) -> dict:
        return self.request("POST", f"/zones/{zone_id}/recordsets", json=body,
                            headers=self.extra).json()

    def set_records(self, zone_id: str, rs_id: str, records: list[str]) -> dict:
        return self.request("PUT", f"/zones/{zone_id}/recordsets/{rs_id}",
                            json={"records": records}, headers=self.extra).json()

    def delete_recordset(self, zone_id: str, rs_id: str) -> None:
        self.request("DELETE", f"/zones/{zone_id}/recordsets/{rs_id}", headers=self.extra)
