"""A throwaway project in a running cloud: the project, a member user, a network with a
subnet — and ``delete()``, which removes everything the project came to own (servers,
floating IPs, routers, ports, networks, security groups, images, keypairs) through the
cloud's own APIs, so the next test sees a clean cloud without a restart.

With an in-process ``Cloud`` (the pytest plugin's), creation and the usual deletion (the
test left nothing but the project's own network) call the services' internal API — the
functions the REST handlers call, so the rows, and what a user sees, are the same — in a
few milliseconds instead of a dozen HTTP requests. Whatever else the test left is
deleted through the REST APIs, as for a cloud elsewhere."""
from __future__ import annotations

import secrets
import time
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import openstack.connection
    from keystoneauth1 import session as ks_session

    from pocketstack.cloud import Cloud


def admin_session(cloud: "Cloud") -> "ks_session.Session":
    """One admin session per cloud for the helpers' own REST calls (its token is reused)."""
    session = getattr(cloud, "_testing_admin_session", None)
    if session is None:
        session = cloud._testing_admin_session = cloud.session()
    return session


class Project:
    """``Project.create(cloud)``; ``.id``, ``.name``, ``.username``, ``.password``,
    ``.network_id``, ``.subnet_id``; ``.session()`` / ``.connection()`` act as the member
    user; ``.delete()`` removes it all."""

    def __init__(self, cloud: "Cloud", admin: "ks_session.Session | None"):
        self.cloud = cloud
        self._admin_session = admin  # made on first use: the in-process path needs none
        self.id = self.name = self.user_id = self.username = ""
        self.password = secrets.token_urlsafe(12)
        self.network_id = self.subnet_id = ""

    # --- creation --------------------------------------------------------------------

    @classmethod
    def create(cls, cloud: "Cloud", admin: "ks_session.Session | None" = None,
               cidr: str = "10.0.0.0/24") -> "Project":
        project = cls(cloud, admin)
        try:
            if getattr(cloud, "runtime", None) is not None:
                project._create_in_process(cidr)
            else:
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

    def _create_in_process(self, cidr: str) -> None:
        """The same project, user, grant, network and subnet as ``_create``, made by the
        functions its REST calls end in (policy aside: the fixture acts as the cloud)."""
        from pocketstack.common import db
        from pocketstack.common.context import RequestContext
        from pocketstack.identity import assignment, resource, users
        from pocketstack.network import networks, subnets

        suffix = uuid.uuid4().hex[:10]
        self.name, self.username = f"test-{suffix}", f"test-{suffix}"
        with self.cloud.runtime.activated():
            with db.transaction():  # the identity part in one commit (the calls join it)
                project_id = resource.create_project(
                    {"name": self.name, "domain_id": "default"}, "default").id
                user_id = users.create_user(
                    {"name": self.username, "password": self.password,
                     "domain_id": "default", "default_project_id": project_id},
                    "default").id
                member = getattr(self.cloud, "_member_role_id", None)
                if member is None:  # looked up once per cloud
                    member = assignment.list_roles(name_filters={"name": "member"})[0].id
                    self.cloud._member_role_id = member
                assignment.create_grant("user", user_id, "project", project_id, member)
            self.id, self.user_id = project_id, user_id
            ctx = RequestContext.admin()
            self.network_id = networks.create_network(ctx, {
                "network": {"name": "private", "project_id": self.id}})["id"]
            self.subnet_id = subnets.create_subnet(ctx, {
                "subnet": {"name": "private-subnet", "network_id": self.network_id,
                           "ip_version": 4, "cidr": cidr, "project_id": self.id}})["id"]

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
        if getattr(self.cloud, "runtime", None) is not None and self._delete_in_process():
            return
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

    def _delete_in_process(self) -> bool:
        """The usual case in-process: the project owns only its network (with subnets and
        DHCP ports) and its default security group. Delete those, the user and the project
        through the internal API and return True; False (nothing deleted) when it owns
        anything else, which the REST path then deletes."""
        import sqlalchemy as sa

        from pocketstack.common import db
        from pocketstack.common.context import RequestContext
        from pocketstack.compute.models import Instance, KeyPair, ServerGroup
        from pocketstack.identity import resource, users
        from pocketstack.identity.models import Project, User
        from pocketstack.image.models import Image
        from pocketstack.network import models as net
        from pocketstack.network import networks, security_groups
        from pocketstack.network.networks import NETWORK_OWNED
        from pocketstack.volume.models import Volume

        own = self.id
        anything_else = [  # what only the REST path deletes (or leaves, as before)
            sa.select(Instance.uuid).where(Instance.project_id == own,
                                           Instance.deleted.is_(False)),
            sa.select(Image.id).where(Image.owner == own, Image.deleted.is_(False)),
            sa.select(Volume.id).where(Volume.project_id == own),
            sa.select(ServerGroup.uuid).where(ServerGroup.project_id == own),
            sa.select(KeyPair.name).where(KeyPair.user_id == self.user_id),
            sa.select(net.Router.id).where(net.Router.project_id == own),
            sa.select(net.FloatingIP.id).where(net.FloatingIP.project_id == own),
            sa.select(net.Port.id).where(net.Port.project_id == own,
                                         net.Port.device_owner.not_in(NETWORK_OWNED)),
            sa.select(net.Trunk.id).where(net.Trunk.project_id == own),
        ]
        with self.cloud.runtime.activated():
            with db.reader() as s:  # one query: EXISTS of each
                if s.scalar(sa.select(sa.or_(*(q.exists() for q in anything_else)))):
                    return False
                network_ids = list(s.scalars(sa.select(net.Network.id).where(
                    net.Network.project_id == own)))
                group_ids = list(s.scalars(sa.select(net.SecurityGroup.id).where(
                    net.SecurityGroup.project_id == own)))
            ctx = RequestContext.admin()
            for network_id in network_ids:
                networks.delete_network(ctx, network_id)
            for group_id in group_ids:
                security_groups.delete_security_group(ctx, group_id)
            with db.transaction() as s:  # user and project in one commit
                for model, delete, item in ((User, users.delete_user, self.user_id),
                                            (Project, resource.delete_project, self.id)):
                    if item and s.get(model, item) is not None:  # else the test deleted it
                        delete(item)
        return True

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

    @property
    def _admin(self) -> "ks_session.Session":
        if self._admin_session is None:
            self._admin_session = admin_session(self.cloud)
        return self._admin_session

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
