"""/os-keypairs: generate or import, per user (admins may act for another user, 2.10)."""
from __future__ import annotations

import base64
import binascii
import hashlib

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.common.timeutils import isotime_naive
from pocketstack.compute.models import KeyPair
from pocketstack.compute.rest.common import (at_least, authorize, body, limit_marker,
                                             respond)

_NAME = {"type": "string", "minLength": 1, "maxLength": 255,
         "pattern": r"^[a-zA-Z0-9 _-]+$"}


# 2.92 allows '@' and '.' in a name
_NAME_292 = dict(_NAME, pattern=r"^[a-zA-Z0-9 _\-@.]+$")


def _schema(req) -> dict:
    v292 = at_least(req, "2.92")
    props = {"name": _NAME_292 if v292 else _NAME, "public_key": {"type": "string"}}
    if at_least(req, "2.2"):
        props["type"] = {"type": "string", "enum": ["ssh", "x509"]}
    if at_least(req, "2.10"):
        props["user_id"] = {"type": "string"}
    return {"type": "object", "properties": {"keypair": {
        # from 2.92 nova no longer generates keys: the public key must be given
        "type": "object", "properties": props,
        "required": ["name", "public_key"] if v292 else ["name"],
        "additionalProperties": False}}, "required": ["keypair"], "additionalProperties": False}


def fingerprint(public_key: str, key_type: str = "ssh") -> str:
    if key_type == "x509":
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes

        try:
            cert = x509.load_pem_x509_certificate(public_key.encode())
        except ValueError:
            raise exceptions.BadRequest("Keypair data is invalid: failed to generate "
                                        "fingerprint") from None
        return ":".join(f"{b:02x}" for b in cert.fingerprint(hashes.SHA1()))
    parts = public_key.strip().split()
    try:
        if len(parts) < 2 or not parts[0].startswith(("ssh-", "ecdsa-")):
            raise ValueError
        blob = base64.b64decode(parts[1], validate=True)
        from cryptography.hazmat.primitives import serialization

        serialization.load_ssh_public_key(public_key.strip().encode())
    except (ValueError, binascii.Error, IndexError):
        raise exceptions.BadRequest("Keypair data is invalid: failed to generate "
                                    "fingerprint") from None
    digest = hashlib.md5(blob).hexdigest()  # noqa: S324 - nova's fingerprint format
    return ":".join(digest[i:i + 2] for i in range(0, 32, 2))


def generate() -> tuple[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH).decode()
    return private, public + " Generated-by-Nova"


def generate_x509(user_id: str) -> tuple[str, str]:
    """A private key and a self-signed client certificate for WinRM, as nova's
    generate_winrm_x509_cert: CN = the user, UPN <user>@localhost, valid ten years."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, user_id)])
    upn = ObjectIdentifier("1.3.6.1.4.1.311.20.2.3")
    # otherName value: DER UTF8String of the UPN
    value = f"{user_id}@localhost".encode()
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False)
            .add_extension(x509.SubjectAlternativeName([x509.OtherName(
                upn, b"\x0c" + bytes([len(value)]) + value)]), False)
            .sign(key, hashes.SHA256()))
    private = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return private, cert.public_bytes(serialization.Encoding.PEM).decode()


def _user(req, data_user: str | None = None) -> str:
    user_id = data_user or (req.query.get("user_id") if at_least(req, "2.10") else None)
    return user_id or req.context.user_id


def _view(req, k: KeyPair, full: bool) -> dict:
    out = {"name": k.name, "public_key": k.public_key, "fingerprint": k.fingerprint}
    if at_least(req, "2.2"):
        out["type"] = k.type
    if full:
        out.update({"user_id": k.user_id, "created_at": isotime_naive(k.created_at),
                    "deleted": False, "deleted_at": None, "updated_at": None, "id": k.id})
    return out


def list_keypairs(req):
    user_id = _user(req)
    authorize(req, "os_compute_api:os-keypairs:index", {"user_id": user_id})
    stmt = sa.select(KeyPair).where(KeyPair.user_id == user_id).order_by(KeyPair.name)
    paged = at_least(req, "2.35")
    limit, marker = limit_marker(req) if paged else (None, None)
    with db.reader() as s:
        if marker is not None:
            if s.scalar(sa.select(KeyPair.id).where(KeyPair.user_id == user_id,
                                                    KeyPair.name == marker)) is None:
                raise exceptions.BadRequest(f"Marker {marker} could not be found.")
            stmt = stmt.where(KeyPair.name > marker)
        if limit is not None:
            stmt = stmt.limit(limit)
        rows = s.scalars(stmt).all()
    out = {"keypairs": [{"keypair": _view(req, k, False)} for k in rows]}
    if paged and req.query.get("limit") and limit and len(rows) == limit:
        from urllib.parse import urlencode

        params = [(k, v) for k, v in req.query.multi_items() if k != "marker"]
        params.append(("marker", rows[-1].name))
        out["keypairs_links"] = [{"rel": "next", "href": f"{req.service_url}/v2.1/os-keypairs?"
                                                        f"{urlencode(params)}"}]
    return respond(req, out)


def create_keypair(req):
    data = body(req, _schema(req))["keypair"]
    user_id = _user(req, data.get("user_id"))
    authorize(req, "os_compute_api:os-keypairs:create", {"user_id": user_id})
    key_type = data.get("type", "ssh")
    private = None
    if data.get("public_key") is not None:
        public = data["public_key"]
    else:
        private, public = generate_x509(user_id) if key_type == "x509" else generate()
    fp = fingerprint(public, key_type)
    with db.transaction() as s:
        count = s.scalar(sa.select(sa.func.count()).select_from(KeyPair)
                         .where(KeyPair.user_id == user_id))
        limit = config.CONF.quota.key_pairs
        if 0 <= limit <= count:
            raise exceptions.OverQuota("Quota exceeded, too many key pairs.")
        if s.scalar(sa.select(KeyPair.id).where(KeyPair.user_id == user_id,
                                                KeyPair.name == data["name"])):
            raise exceptions.Conflict(f"Key pair '{data['name']}' already exists.")
        k = KeyPair(user_id=user_id, name=data["name"], fingerprint=fp, public_key=public,
                    type=key_type)
        s.add(k)
    out = _view(req, k, False)
    out["user_id"] = user_id
    if private is not None:
        out["private_key"] = private
    return respond(req, {"keypair": out}, 201 if at_least(req, "2.2") else 200)


def _get(req, s) -> KeyPair:
    user_id = _user(req)
    k = s.scalar(sa.select(KeyPair).where(KeyPair.user_id == user_id,
                                          KeyPair.name == req.params["name"]))
    if k is None:
        raise exceptions.NotFound(f"Keypair {req.params['name']} not found for user {user_id}")
    return k


def show_keypair(req):
    authorize(req, "os_compute_api:os-keypairs:show", {"user_id": _user(req)})
    with db.reader() as s:
        return respond(req, {"keypair": _view(req, _get(req, s), True)})


def delete_keypair(req):
    authorize(req, "os_compute_api:os-keypairs:delete", {"user_id": _user(req)})
    with db.transaction() as s:
        s.delete(_get(req, s))
    return respond(req, None, 204 if at_least(req, "2.2") else 202)


def find(user_id: str, name: str) -> KeyPair | None:
    with db.reader() as s:
        return s.scalar(sa.select(KeyPair).where(KeyPair.user_id == user_id,
                                                 KeyPair.name == name))
