"""/v3/OS-FEDERATION: identity providers, their protocols, mappings and service providers
(keystone/api/os_federation.py: PUT creates with 201, PATCH updates, DELETE 204)."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.identity import federation, schemas
from pocketstack.identity.rest import common, federation_schemas as fs
from pocketstack.wsgi import routing

_P = "/v3/OS-FEDERATION"


def _id(req, name: str) -> str:
    """Ids come from the URL: Keystone's 64 url-safe characters."""
    value = req.params[name]
    schemas.validate(fs.ID, value)
    return value


# --- views ----------------------------------------------------------------------------------

def idp_view(req, idp) -> dict:
    url = common.self_url(req, f"{_P}/identity_providers/{idp.id}")
    return {"id": idp.id, "enabled": idp.enabled, "description": idp.description,
            "domain_id": idp.domain_id, "authorization_ttl": idp.authorization_ttl,
            "remote_ids": federation.remote_ids_of(idp.id),
            "links": {"self": url, "protocols": f"{url}/protocols"}}


def protocol_view(req, p) -> dict:
    idp_url = common.self_url(req, f"{_P}/identity_providers/{p.idp_id}")
    body = {"id": p.id, "mapping_id": p.mapping_id,
            "links": {"self": f"{idp_url}/protocols/{p.id}", "identity_provider": idp_url}}
    if p.remote_id_attribute:
        body["remote_id_attribute"] = p.remote_id_attribute
    return body


def mapping_view(req, m) -> dict:
    return {"id": m.id, "rules": m.rules, "schema_version": m.schema_version,
            "links": {"self": common.self_url(req, f"{_P}/mappings/{m.id}")}}


def sp_view(req, sp) -> dict:
    return {"id": sp.id, "enabled": sp.enabled, "description": sp.description,
            "auth_url": sp.auth_url, "sp_url": sp.sp_url,
            "relay_state_prefix": sp.relay_state_prefix,
            "links": {"self": common.self_url(req, f"{_P}/service_providers/{sp.id}")}}


# --- identity providers ---------------------------------------------------------------------

def list_idps(req):
    common.authorize(req, "identity:list_identity_providers")
    found = federation.list_idps(id_=req.query.get("id"),
                                 enabled=common.query_bool(req, "enabled"))
    return common.collection(req, "identity_providers", found, idp_view)


def create_idp(req):
    common.authorize(req, "identity:create_identity_provider")
    idp_id = _id(req, "idp_id")
    ref = common.body(req, fs.IDP_CREATE)["identity_provider"]
    return common.member(req, "identity_provider", federation.create_idp(idp_id, ref),
                         idp_view, 201)


def get_idp(req):
    common.authorize(req, "identity:get_identity_provider")
    return common.member(req, "identity_provider", federation.get_idp(req.params["idp_id"]),
                         idp_view)


def update_idp(req):
    common.authorize(req, "identity:update_identity_provider")
    ref = common.body(req, fs.IDP_UPDATE)["identity_provider"]
    return common.member(req, "identity_provider",
                         federation.update_idp(req.params["idp_id"], ref), idp_view)


def delete_idp(req):
    common.authorize(req, "identity:delete_identity_provider")
    federation.delete_idp(req.params["idp_id"])
    return routing.empty()


# --- protocols ------------------------------------------------------------------------------

def list_protocols(req):
    common.authorize(req, "identity:list_protocols")
    return common.collection(req, "protocols", federation.list_protocols(req.params["idp_id"]),
                             protocol_view)


def create_protocol(req):
    common.authorize(req, "identity:create_protocol")
    protocol_id = _id(req, "protocol_id")
    ref = common.body(req, fs.PROTOCOL_CREATE)["protocol"]
    created = federation.create_protocol(req.params["idp_id"], protocol_id, ref)
    return common.member(req, "protocol", created, protocol_view, 201)


def get_protocol(req):
    common.authorize(req, "identity:get_protocol")
    found = federation.get_protocol(req.params["idp_id"], req.params["protocol_id"])
    return common.member(req, "protocol", found, protocol_view)


def update_protocol(req):
    common.authorize(req, "identity:update_protocol")
    ref = common.body(req, fs.PROTOCOL_UPDATE)["protocol"]
    updated = federation.update_protocol(req.params["idp_id"], req.params["protocol_id"], ref)
    return common.member(req, "protocol", updated, protocol_view)


def delete_protocol(req):
    common.authorize(req, "identity:delete_protocol")
    federation.delete_protocol(req.params["idp_id"], req.params["protocol_id"])
    return routing.empty()


# --- mappings -------------------------------------------------------------------------------

def _mapping_body(req) -> dict:
    ref = common.body(req, fs.MAPPING)["mapping"]
    version = ref.get("schema_version") or federation.DEFAULT_SCHEMA_VERSION
    if version not in federation.SCHEMA_VERSIONS:
        raise exceptions.ValidationError(
            f"Invalid schema_version {version!r}: one of "
            f"{', '.join(federation.SCHEMA_VERSIONS)}.")
    schemas.validate(fs.RULES[version], ref["rules"])
    return ref


def list_mappings(req):
    common.authorize(req, "identity:list_mappings")
    return common.collection(req, "mappings", federation.list_mappings(), mapping_view)


def create_mapping(req):
    common.authorize(req, "identity:create_mapping")
    mapping_id = _id(req, "mapping_id")
    created = federation.create_mapping(mapping_id, _mapping_body(req))
    return common.member(req, "mapping", created, mapping_view, 201)


def get_mapping(req):
    common.authorize(req, "identity:get_mapping")
    return common.member(req, "mapping", federation.get_mapping(req.params["mapping_id"]),
                         mapping_view)


def update_mapping(req):
    common.authorize(req, "identity:update_mapping")
    updated = federation.update_mapping(req.params["mapping_id"], _mapping_body(req))
    return common.member(req, "mapping", updated, mapping_view)


def delete_mapping(req):
    common.authorize(req, "identity:delete_mapping")
    federation.delete_mapping(req.params["mapping_id"])
    return routing.empty()


# --- service providers --------------------------------------------------------------------

def list_sps(req):
    common.authorize(req, "identity:list_service_providers")
    found = federation.list_sps(id_=req.query.get("id"),
                                enabled=common.query_bool(req, "enabled"))
    return common.collection(req, "service_providers", found, sp_view)


def create_sp(req):
    common.authorize(req, "identity:create_service_provider")
    sp_id = _id(req, "sp_id")
    ref = common.body(req, fs.SP_CREATE)["service_provider"]
    return common.member(req, "service_provider", federation.create_sp(sp_id, ref), sp_view,
                         201)


def get_sp(req):
    common.authorize(req, "identity:get_service_provider")
    return common.member(req, "service_provider", federation.get_sp(req.params["sp_id"]),
                         sp_view)


def update_sp(req):
    common.authorize(req, "identity:update_service_provider")
    ref = common.body(req, fs.SP_UPDATE)["service_provider"]
    return common.member(req, "service_provider", federation.update_sp(req.params["sp_id"], ref),
                         sp_view)


def delete_sp(req):
    common.authorize(req, "identity:delete_service_provider")
    federation.delete_sp(req.params["sp_id"])
    return routing.empty()


_IDP = f"{_P}/identity_providers/{{idp_id}}"
ROUTES = {
    f"{_P}/identity_providers": {"GET": list_idps},
    _IDP: {"GET": get_idp, "HEAD": get_idp, "PUT": create_idp, "PATCH": update_idp,
           "DELETE": delete_idp},
    f"{_IDP}/protocols": {"GET": list_protocols},
    f"{_IDP}/protocols/{{protocol_id}}": {"GET": get_protocol, "HEAD": get_protocol,
                                          "PUT": create_protocol, "PATCH": update_protocol,
                                          "DELETE": delete_protocol},
    f"{_P}/mappings": {"GET": list_mappings},
    f"{_P}/mappings/{{mapping_id}}": {"GET": get_mapping, "HEAD": get_mapping,
                                      "PUT": create_mapping, "PATCH": update_mapping,
                                      "DELETE": delete_mapping},
    f"{_P}/service_providers": {"GET": list_sps},
    f"{_P}/service_providers/{{sp_id}}": {"GET": get_sp, "HEAD": get_sp, "PUT": create_sp,
                                          "PATCH": update_sp, "DELETE": delete_sp},
}
