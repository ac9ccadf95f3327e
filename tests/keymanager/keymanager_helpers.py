"""Key manager test helpers (a module of its own: ``from conftest import`` is ambiguous
where several conftests load): a keystoneauth session that finds barbican in the catalog,
barbican's error body, and more users of a project."""
from __future__ import annotations

import uuid


class KeyManager:
    def __init__(self, session, user=None):
        self.s = session
        self.user = user  # make_user's dict, or None for the admin

    def req(self, method, path, json=None, headers=None, **kw):
        target = dict(endpoint_filter={"service_type": "key-manager"})
        if path.startswith("http"):  # a full ref, as barbican hands them out
            target = {}
        return self.s.request(path, method, json=json, headers=headers, raise_exc=False,
                              **target, **kw)

    def get(self, path, **kw):
        return self.req("GET", path, **kw)

    def post(self, path, json=None, **kw):
        return self.req("POST", path, json=json, **kw)

    def put(self, path, json=None, **kw):
        return self.req("PUT", path, json=json, **kw)

    def patch(self, path, json=None, **kw):
        return self.req("PATCH", path, json=json, **kw)

    def delete(self, path, **kw):
        return self.req("DELETE", path, **kw)

    def store(self, payload="s3cret", content_type="text/plain", **fields) -> str:
        """A new secret's ref."""
        body = {"payload": payload, "payload_content_type": content_type, **fields}
        r = self.post("/v1/secrets", body)
        assert r.status_code == 201, r.text
        return r.json()["secret_ref"]


def barbican_error(response, status: int) -> str:
    """The description of barbican's error body, after checking its shape."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"code", "title", "description"}, body
    assert body["code"] == status
    return body["description"]


def colleague(cloud, project_id: str, roles=("member",)) -> KeyManager:
    """Another user with ``roles`` on an existing project (direct database writes, as
    cloud.make_user)."""
    from pocketstack.common import db
    from pocketstack.identity import passwords
    from pocketstack.identity.models import Assignment, Role, User

    user_id, name = uuid.uuid4().hex, f"user-{uuid.uuid4().hex[:8]}"
    with db.transaction() as s:
        s.add(User(id=user_id, name=name, domain_id="default",
                   password_hash=passwords.hash_password("pass-word"),
                   default_project_id=project_id))
        s.flush()
        for role in roles:
            role_id = s.query(Role.id).filter_by(name=role, domain_id=None).scalar()
            s.add(Assignment(type="UserProject", actor_id=user_id, target_id=project_id,
                             role_id=role_id, inherited=False))
    user = {"id": user_id, "name": name, "password": "pass-word", "project_id": project_id}
    return KeyManager(cloud.user_session(user), user)
