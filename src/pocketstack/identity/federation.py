"""OS-FEDERATION objects as Keystone stores them: identity providers (with their remote ids
and an auto-created domain), their protocols, mappings and service providers.

These are records a federated deployment configures; pocketstack has no SAML/OIDC
front end, so nothing authenticates through them (a federated login is a 401 as on a
Keystone without the web server module).
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import base, resource
from pocketstack.identity.models import (Domain, FederationProtocol, IdentityProvider,
                                         IdpRemoteId, Mapping, ServiceProvider)

SCHEMA_VERSIONS = ("1.0", "2.0", "3.0")
DEFAULT_SCHEMA_VERSION = "1.0"  # Keystone's [federation] attribute_mapping_default_...


def _idp(s, idp_id: str) -> IdentityProvider:
    return base.get_or_404(s, IdentityProvider, idp_id, "Identity Provider")


def remote_ids(s, idp_id: str) -> list[str]:
    return sorted(s.scalars(sa.select(IdpRemoteId.remote_id)
                            .where(IdpRemoteId.idp_id == idp_id)))


def _set_remote_ids(s, idp_id: str, wanted: list[str] | None) -> None:
    s.execute(sa.delete(IdpRemoteId).where(IdpRemoteId.idp_id == idp_id))
    for remote_id in wanted or []:
        owner = s.get(IdpRemoteId, remote_id)
        if owner is not None:
            raise base.conflict("identity_provider",
                                f"Duplicate remote ID: {remote_id}")
        s.add(IdpRemoteId(remote_id=remote_id, idp_id=idp_id))
    s.flush()


# --- identity providers ---------------------------------------------------------------------

def create_idp(idp_id: str, ref: dict) -> IdentityProvider:
    created_domain = None
    domain_id = ref.get("domain_id")
    if domain_id:
        with db.reader() as s:
            if s.get(Domain, domain_id) is None:
                raise exceptions.NotFound(f"Could not find domain: {domain_id}.")
    else:  # Keystone makes a domain for the provider's users
        created_domain = resource.create_domain({
            "name": base.new_id(), "enabled": True,
            "description": f"Auto generated federated domain for Identity Provider: {idp_id}"})
        domain_id = created_domain.id
    try:
        with base.writing("identity_provider") as s:
            if s.get(IdentityProvider, idp_id) is not None:
                raise base.conflict("identity_provider", f"Duplicate ID, {idp_id}")
            idp = IdentityProvider(id=idp_id, enabled=ref.get("enabled", False),
                                   description=ref.get("description"), domain_id=domain_id,
                                   authorization_ttl=ref.get("authorization_ttl"), extra={})
            s.add(idp)
            s.flush()
            _set_remote_ids(s, idp_id, ref.get("remote_ids"))
    except exceptions.Conflict:
        if created_domain is not None:
            resource.update_domain(created_domain.id, {"enabled": False})
            resource.delete_domain(created_domain.id)
        raise
    return idp


def list_idps(*, id_=None, enabled=None) -> list[IdentityProvider]:
    with db.reader() as s:
        q = sa.select(IdentityProvider)
        if id_ is not None:
            q = q.where(IdentityProvider.id == id_)
        if enabled is not None:
            q = q.where(IdentityProvider.enabled.is_(enabled))
        return list(s.scalars(q.order_by(IdentityProvider.id)))


def get_idp(idp_id: str) -> IdentityProvider:
    with db.reader() as s:
        return _idp(s, idp_id)


def update_idp(idp_id: str, ref: dict) -> IdentityProvider:
    with base.writing("identity_provider") as s:
        idp = _idp(s, idp_id)
        for key in ("enabled", "description", "authorization_ttl"):
            if key in ref:
                setattr(idp, key, ref[key])
        if "remote_ids" in ref:
            _set_remote_ids(s, idp_id, ref["remote_ids"])
    return idp


def delete_idp(idp_id: str) -> None:
    with db.transaction() as s:
        idp = _idp(s, idp_id)
        s.execute(sa.delete(FederationProtocol).where(FederationProtocol.idp_id == idp_id))
        s.execute(sa.delete(IdpRemoteId).where(IdpRemoteId.idp_id == idp_id))
        s.delete(idp)


def remote_ids_of(idp_id: str) -> list[str]:
    with db.reader() as s:
        return remote_ids(s, idp_id)


# --- protocols ------------------------------------------------------------------------------

def _mapping_must_exist(s, mapping_id: str) -> None:
    if s.get(Mapping, mapping_id) is None:
        raise exceptions.ValidationError(f"Invalid mapping id: {mapping_id}")


def _protocol(s, idp_id: str, protocol_id: str) -> FederationProtocol:
    _idp(s, idp_id)
    row = s.get(FederationProtocol, (protocol_id, idp_id))
    if row is None:
        raise exceptions.NotFound(f"Could not find federated protocol {protocol_id} for "
                                  f"Identity Provider: {idp_id}.")
    return row


def create_protocol(idp_id: str, protocol_id: str, ref: dict) -> FederationProtocol:
    with base.writing("protocol") as s:
        _mapping_must_exist(s, ref["mapping_id"])
        _idp(s, idp_id)
        if s.get(FederationProtocol, (protocol_id, idp_id)) is not None:
            raise base.conflict("protocol", f"Duplicate ID, {protocol_id}")
        row = FederationProtocol(id=protocol_id, idp_id=idp_id, mapping_id=ref["mapping_id"],
                                 remote_id_attribute=ref.get("remote_id_attribute"))
        s.add(row)
    return row


def list_protocols(idp_id: str) -> list[FederationProtocol]:
    with db.reader() as s:
        _idp(s, idp_id)
        return list(s.scalars(sa.select(FederationProtocol).where(
            FederationProtocol.idp_id == idp_id).order_by(FederationProtocol.id)))


def get_protocol(idp_id: str, protocol_id: str) -> FederationProtocol:
    with db.reader() as s:
        return _protocol(s, idp_id, protocol_id)


def update_protocol(idp_id: str, protocol_id: str, ref: dict) -> FederationProtocol:
    with db.transaction() as s:
        row = _protocol(s, idp_id, protocol_id)
        _mapping_must_exist(s, ref["mapping_id"])
        row.mapping_id = ref["mapping_id"]
        if "remote_id_attribute" in ref:
            row.remote_id_attribute = ref["remote_id_attribute"]
    return row


def delete_protocol(idp_id: str, protocol_id: str) -> None:
    with db.transaction() as s:
        s.delete(_protocol(s, idp_id, protocol_id))


# --- mappings -------------------------------------------------------------------------------

def _mapping(s, mapping_id: str) -> Mapping:
    return base.get_or_404(s, Mapping, mapping_id, "mapping")


def create_mapping(mapping_id: str, ref: dict) -> Mapping:
    with base.writing("mapping") as s:
        if s.get(Mapping, mapping_id) is not None:
            raise base.conflict("mapping", f"Duplicate ID, {mapping_id}")
        row = Mapping(id=mapping_id, rules=ref["rules"],
                      schema_version=ref.get("schema_version") or DEFAULT_SCHEMA_VERSION)
        s.add(row)
    return row


def list_mappings() -> list[Mapping]:
    with db.reader() as s:
        return list(s.scalars(sa.select(Mapping).order_by(Mapping.id)))


def get_mapping(mapping_id: str) -> Mapping:
    with db.reader() as s:
        return _mapping(s, mapping_id)


def update_mapping(mapping_id: str, ref: dict) -> Mapping:
    with db.transaction() as s:
        row = _mapping(s, mapping_id)
        row.rules = ref["rules"]
        row.schema_version = ref.get("schema_version") or DEFAULT_SCHEMA_VERSION
    return row


def delete_mapping(mapping_id: str) -> None:
    with db.transaction() as s:
        s.delete(_mapping(s, mapping_id))


# --- service providers --------------------------------------------------------------------

def _sp(s, sp_id: str) -> ServiceProvider:
    return base.get_or_404(s, ServiceProvider, sp_id, "Service Provider")


def create_sp(sp_id: str, ref: dict) -> ServiceProvider:
    with base.writing("service_provider") as s:
        if s.get(ServiceProvider, sp_id) is not None:
            raise base.conflict("service_provider", f"Duplicate ID, {sp_id}")
        row = ServiceProvider(id=sp_id, enabled=ref.get("enabled", False),
                              description=ref.get("description"), auth_url=ref["auth_url"],
                              sp_url=ref["sp_url"],
                              relay_state_prefix=ref.get("relay_state_prefix") or "ss:mem:")
        s.add(row)
    return row


def list_sps(*, id_=None, enabled=None) -> list[ServiceProvider]:
    with db.reader() as s:
        q = sa.select(ServiceProvider)
        if id_ is not None:
            q = q.where(ServiceProvider.id == id_)
        if enabled is not None:
            q = q.where(ServiceProvider.enabled.is_(enabled))
        return list(s.scalars(q.order_by(ServiceProvider.id)))


def get_sp(sp_id: str) -> ServiceProvider:
    with db.reader() as s:
        return _sp(s, sp_id)


def update_sp(sp_id: str, ref: dict) -> ServiceProvider:
    with db.transaction() as s:
        row = _sp(s, sp_id)
        for key in ("enabled", "description", "auth_url", "sp_url", "relay_state_prefix"):
            if key in ref:
                setattr(row, key, ref[key])
    return row


def delete_sp(sp_id: str) -> None:
    with db.transaction() as s:
        s.delete(_sp(s, sp_id))
