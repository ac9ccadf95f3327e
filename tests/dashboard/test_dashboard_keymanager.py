"""The dashboard's key manager page over real HTTP: the project's secrets (metadata, never
the payload) with delete, and its secret containers with their secret refs, checked
against the Barbican API's own answers. A refusal shows barbican's description."""
from __future__ import annotations

import uuid

from helpers.dashboard import alert_text, csrf_token

KM = {"service_type": "key-manager"}


def _store(s, payload, **fields) -> str:
    r = s.post("/v1/secrets", json={"payload": payload, "payload_content_type": "text/plain",
                                    **fields}, endpoint_filter=KM)
    assert r.status_code == 201, r.text
    return r.json()["secret_ref"]


def test_secrets_page_lists_metadata_never_the_payload(cloud, member):
    user, client = member
    s = cloud.user_session(user)
    payload = f"payload-{uuid.uuid4().hex}"
    ref = _store(s, payload, name="db-password", algorithm="aes", bit_length=256,
                 expiration="2099-01-01T00:00:00")
    secret_id = ref.rsplit("/", 1)[1]
    api = s.get(ref, endpoint_filter=KM).json()
    other = cloud.make_user()
    theirs = _store(cloud.user_session(other), "x", name="their-secret")
    page = client.get("/dashboard/secrets")
    assert page.status_code == 200
    row = page.text.split(f'data-secret="{secret_id}">')[1].split("</tr>")[0]
    assert ('<th scope="row">db-password</th><td>opaque</td><td>aes</td>\n'
            f'    <td>256</td><td>{api["expiration"]}</td><td>{api["created"]}</td>') in row
    assert payload not in page.text
    assert "their-secret" not in page.text and theirs.rsplit("/", 1)[1] not in page.text
    assert 'href="/dashboard/secrets">Secrets</a>' in page.text


def test_delete_a_secret_and_barbicans_refusal(cloud, member):
    user, client = member
    s = cloud.user_session(user)
    ref = _store(s, "gone-soon", name="temporary")
    secret_id = ref.rsplit("/", 1)[1]
    csrf = csrf_token(client.get("/dashboard/secrets").text)
    r = client.post("/dashboard/secrets", data={"csrf_token": csrf, "action": "delete",
                                                "secret_id": secret_id})
    assert r.status_code == 303
    assert s.get(ref, endpoint_filter=KM, raise_exc=False).status_code == 404
    assert f'data-secret="{secret_id}"' not in client.get("/dashboard/secrets").text
    # Again: barbican's own 404 and description.
    r = client.post("/dashboard/secrets", data={"csrf_token": csrf, "action": "delete",
                                                "secret_id": secret_id})
    api = s.delete(ref, endpoint_filter=KM, raise_exc=False)
    assert r.status_code == api.status_code == 404
    assert alert_text(r.text) == api.json()["description"]
    # Another project's secret: barbican's refusal for this member, and it stays.
    theirs = _store(cloud.user_session(cloud.make_user()), "x")
    r = client.post("/dashboard/secrets", data={"csrf_token": csrf, "action": "delete",
                                                "secret_id": theirs.rsplit("/", 1)[1]})
    api = s.delete(theirs, endpoint_filter=KM, raise_exc=False)
    assert r.status_code == api.status_code == 403
    assert alert_text(r.text) == api.json()["description"]
    assert cloud.session().get(theirs, endpoint_filter=KM).status_code == 200
    r = client.post("/dashboard/secrets", data={"csrf_token": csrf, "action": "delete",
                                                "secret_id": ""})
    assert r.status_code == 400 and alert_text(r.text)


def test_secret_containers_with_their_refs(cloud, member):
    user, client = member
    s = cloud.user_session(user)
    private = _store(s, "PRIV", name="the-key", secret_type="private")
    public = _store(s, "PUB", name="the-cert", secret_type="public")
    r = s.post("/v1/containers", endpoint_filter=KM, json={
        "name": "key-pair", "type": "rsa", "secret_refs": [
            {"name": "private_key", "secret_ref": private},
            {"name": "public_key", "secret_ref": public}]})
    container_ref = r.json()["container_ref"]
    other = cloud.user_session(cloud.make_user())
    other.post("/v1/containers", endpoint_filter=KM,
               json={"name": "their-bundle", "type": "generic"})
    page = client.get("/dashboard/secrets")
    row = page.text.split(f'data-container="{container_ref}">')[1].split("</tr>")[0]
    assert '<th scope="row">key-pair</th><td>rsa</td>' in row
    assert f'<div data-ref="{private}">private_key: the-key</div>' in row
    assert f'<div data-ref="{public}">public_key: the-cert</div>' in row
    assert "their-bundle" not in page.text
