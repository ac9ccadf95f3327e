"""Helpers for the identity tests (imported by name, so the module name is unique): raw HTTP (httpx)
against the running cloud's Keystone
API, so tests see exactly the status, headers and body a client gets."""
from __future__ import annotations

import uuid

import httpx


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class Keystone:
    def __init__(self, cloud):
        self.cloud = cloud
        self.base = cloud.auth_url
        self.http = httpx.Client(base_url=self.base, timeout=30)
        self._admin_token = None

    # --- tokens -------------------------------------------------------------------------

    def password_auth(self, name, password, scope=None, domain_id="default",
                      user_id=None) -> httpx.Response:
        user = {"id": user_id} if user_id else {"name": name, "domain": {"id": domain_id}}
        user["password"] = password
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": user}}}}
        if scope is not None:
            body["auth"]["scope"] = scope
        return self.http.post("/v3/auth/tokens", json=body)

    def token(self, name, password, scope=None, domain_id="default") -> str:
        r = self.password_auth(name, password, scope, domain_id)
        assert r.status_code == 201, r.text
        return r.headers["x-subject-token"]

    def project_token(self, user: dict, project_id: str | None = None) -> str:
        return self.token(user["name"], user["password"],
                          {"project": {"id": project_id or user["project_id"]}})

    @property
    def admin_token(self) -> str:
        if self._admin_token is None or self.validate(self._admin_token).status_code != 200:
            self._admin_token = self.token("admin", self.cloud.admin_password,
                                           {"project": {"name": "admin",
                                                        "domain": {"id": "default"}}})
        return self._admin_token

    def validate(self, subject: str, token: str | None = None) -> httpx.Response:
        return self.http.get("/v3/auth/tokens", headers={
            "X-Auth-Token": token or subject, "X-Subject-Token": subject})

    # --- plain requests -----------------------------------------------------------------

    def request(self, method, path, *, token=None, admin=True, **kwargs) -> httpx.Response:
        headers = kwargs.pop("headers", {})
        if token is None and admin:
            token = self.admin_token
        if token:
            headers["X-Auth-Token"] = token
        return self.http.request(method, path, headers=headers, **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)

    def put(self, path, **kw):
        return self.request("PUT", path, **kw)

    def patch(self, path, **kw):
        return self.request("PATCH", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def head(self, path, **kw):
        return self.request("HEAD", path, **kw)

    # --- creating things as admin -------------------------------------------------------

    def create(self, kind: str, **attrs) -> dict:
        r = self.post(f"/v3/{kind}s", json={kind: attrs})
        assert r.status_code == 201, r.text
        return r.json()[kind]

    def role_id(self, name: str) -> str:
        r = self.get("/v3/roles", params={"name": name})
        return r.json()["roles"][0]["id"]

    def grant(self, project_id, user_id, role="member", kind="users", target="projects"):
        r = self.put(f"/v3/{target}/{project_id}/{kind}/{user_id}/roles/{self.role_id(role)}")
        assert r.status_code == 204, r.text

    def new_user(self, role="member", project_id=None, domain_id="default", password=None):
        """A project (unless given) and a user holding ``role`` on it, through the API."""
        if project_id is None:
            project_id = self.create("project", name=unique("p"), domain_id=domain_id)["id"]
        password = password or unique("pw")
        user = self.create("user", name=unique("u"), password=password, domain_id=domain_id)
        if role:
            self.grant(project_id, user["id"], role)
        return dict(user, password=password, project_id=project_id)


def assert_error(r: httpx.Response, code: int, message: str | None = None) -> dict:
    """A Keystone error: status, {"error": {"code", "message", "title"}}, JSON type."""
    assert r.status_code == code, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert error["code"] == code
    assert error["title"] and error["message"]
    if message is not None:
        assert error["message"] == message, error["message"]
    return error
