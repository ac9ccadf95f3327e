"""A throwaway project in a running cloud: the project, a member user, a network with a
subnet — and ``delete()``, which removes everything the project came to own (servers,
floating IPs, routers, ports, networks, security groups, images, keypairs) through the
cloud's own APIs, so the next test sees a clean cloud without a restart."""
from __future__ import annotations

import secrets
import time
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import openstack.connection
    from keystoneauth1 import session as ks_session

    from pocketstack.cloud import Cloud


class Project:
    """``Project.create(cloud)``; ``.id``, ``.name``, ``.username``, ``.password``,
    ``.network_id``, ``.subnet_id``; ``.session()`` / ``.connection()`` act as the member
    user; ``.delete()`` removes it all."""

    def __init__(self, cloud: "Cloud", admin: "ks_session.Session"):
        self.cloud = cloud
        self._admin = admin
        self.id = self.name = self.user_id = self.username = ""
        self.password = secrets.token_urlsafe(12)
        self.network_id = self.subnet_id = ""

    # --- creation --------------------------------------------------------------------

    @classmethod
    def create(cls, cloud: "Cloud", admin: "ks_session.Session | None" = None,
               cidr: str = "10.0.0.0/24") -> "Project":
        project = cls(cloud, admin or cloud.session())
        try:
            project._create(cidr)
        except BaseException:
            project.delete()
            raise
        return project

    def _create(self, cidr: str) -> None:
        suffix = uuid.uuid4().hex[:10]
        self.name, self.username = f"test-{suffix}", f"test-{suffix}"
        self.id = self._post("identity", "/v3/projects", {
            "project": {"name": self.name, "domain_id": "default"}})["project"]["id"]
        self.user_id = self._post("identity", "/v3/users", {
            "user": {"name": self.username, "password": self.password, "domain_id": "default",
                     "default_project_id": self.id}})["user"]["id"]
        member = getattr(self.cloud, "_member_role_id", None)
        if member is None:  # looked up once per cloud
            member = self._get("identity", "/v3/roles?name=member")["roles"][0]["id"]
            self.cloud._member_role_id = member
        self._admin.put(self._url("identity", f"/v3/projects/{self.id}/users/{self.user_id}"
                                              f"/roles/{member}"))
        self.network_id = self._post("network", "/v2.0/networks", {
            "network": {"name": "private", "project_id": self.id}})["network"]["id"]
        self.subnet_id = self._post("network", "/v2.0/subnets", {
            "subnet": {"name": "private-subnet", "network_id": self.network_id,
                       "ip_version": 4, "cidr": cidr, "project_id": self.id}})["subnet"]["id"]

    # --- as the member user ------------------------------------------------------------

    def session(self) -> "ks_session.Session":
        return self.cloud.session(self.username, self.password, project_id=self.id)

    def connection(self) -> "openstack.connection.Connection":
        return self.cloud.connection(username=self.username, password=self.password,
                                     project_id=self.id)

    # --- deletion ----------------------------------------------------------------------

    def delete(self) -> None:
        """Delete what the project owns, then the user and the project; whatever is already
        gone is skipped."""
        if self.id:
            self._delete_servers()
            self._delete_network_resources()
            for image in self._get("image", f"/v2/images?owner={self.id}")["images"]:
                self._delete("image", f"/v2/images/{image['id']}")
        if self.user_id:
            keypairs = self._get("compute", f"/os-keypairs?user_id={self.user_id}",
                                 microversion="2.10")["keypairs"]
            for item in keypairs:
                self._delete("compute", f"/os-keypairs/{item['keypair']['name']}"
                                        f"?user_id={self.user_id}", microversion="2.10")
            self._delete("identity", f"/v3/users/{self.user_id}")
        if self.id:
            self._delete("identity", f"/v3/projects/{self.id}")

    def _delete_servers(self) -> None:
        servers = self._get("compute", f"/servers?all_tenants=1&project_id={self.id}"
                            )["servers"]
        for server in servers:
            self._delete("compute", f"/servers/{server['id']}")
        deadline = time.monotonic() + 60
        while servers and time.monotonic() < deadline:
            servers = self._get("compute", f"/servers?all_tenants=1&project_id={self.id}"
                                )["servers"]
            if servers:
                time.sleep(0.05)

    def _delete_network_resources(self) -> None:
        own = f"project_id={self.id}"
        for fip in self._get("network", f"/v2.0/floatingips?{own}")["floatingips"]:
            self._delete("network", f"/v2.0/floatingips/{fip['id']}")
        for router in self._get("network", f"/v2.0/routers?{own}")["routers"]:
            self._admin.put(self._url("network", f"/v2.0/routers/{router['id']}"),
                            json={"router": {"external_gateway_info": {}}}, raise_exc=False)
            ports = self._get("network", f"/v2.0/ports?device_id={router['id']}")["ports"]
            for port in ports:
                self._admin.put(self._url("network", f"/v2.0/routers/{router['id']}"
                                                     "/remove_router_interface"),
                                json={"port_id": port["id"]}, raise_exc=False)
            self._delete("network", f"/v2.0/routers/{router['id']}")
        for port in self._get("network", f"/v2.0/ports?{own}")["ports"]:
            self._delete("network", f"/v2.0/ports/{port['id']}")
        for net in self._get("network", f"/v2.0/networks?{own}")["networks"]:
            self._delete("network", f"/v2.0/networks/{net['id']}")
        for group in self._get("network", f"/v2.0/security-groups?{own}")["security_groups"]:
            self._delete("network", f"/v2.0/security-groups/{group['id']}")

    # --- plumbing ------------------------------------------------------------------------

    _PREFIX = {"identity": "/identity", "network": "/network", "image": "/image",
               "compute": "/compute/v2.1"}

    def _url(self, service: str, path: str) -> str:
        return self.cloud.url + self._PREFIX[service] + path

    def _headers(self, microversion: str | None) -> dict:
        return {"OpenStack-API-Version": f"compute {microversion}"} if microversion else {}

    def _get(self, service: str, path: str, microversion: str | None = None) -> Any:
        return self._admin.get(self._url(service, path),
                               headers=self._headers(microversion)).json()

    def _post(self, service: str, path: str, body: dict) -> Any:
        return self._admin.post(self._url(service, path), json=body).json()

    def _delete(self, service: str, path: str, microversion: str | None = None) -> None:
        resp = self._admin.delete(self._url(service, path), raise_exc=False,
                                  headers=self._headers(microversion))
        if resp.status_code not in (202, 204, 404):
            raise RuntimeError(f"DELETE {path} answered {resp.status_code}: {resp.text[:300]}")
