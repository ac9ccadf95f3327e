"""/v3/services, /v3/endpoints and /v3/regions."""
from __future__ import annotations

from pocketstack.identity import catalog, schemas
from pocketstack.identity.rest import common, views
from pocketstack.wsgi import routing


# --- services -------------------------------------------------------------------------

def list_services(req):
    common.authorize(req, "identity:list_services")
    found = catalog.list_services(type_=req.query.get("type"), name=req.query.get("name"))
    return common.collection(req, "services", found, views.service)


def create_service(req):
    common.authorize(req, "identity:create_service")
    ref = common.body(req, schemas.service_create)["service"]
    return common.member(req, "service", catalog.create_service(ref), views.service, 201)


def get_service(req):
    common.authorize(req, "identity:get_service")
    return common.member(req, "service", catalog.get_service(req.params["service_id"]),
                         views.service)


def update_service(req):
    common.authorize(req, "identity:update_service")
    ref = common.body(req, schemas.service_update)["service"]
    return common.member(req, "service", catalog.update_service(req.params["service_id"], ref),
                         views.service)


def delete_service(req):
    common.authorize(req, "identity:delete_service")
    catalog.delete_service(req.params["service_id"])
    return routing.empty()


# --- endpoints ------------------------------------------------------------------------

def list_endpoints(req):
    common.authorize(req, "identity:list_endpoints")
    found = catalog.list_endpoints(service_id=req.query.get("service_id"),
                                   interface=req.query.get("interface"),
                                   region_id=req.query.get("region_id"))
    return common.collection(req, "endpoints", found, views.endpoint)


def create_endpoint(req):
    common.authorize(req, "identity:create_endpoint")
    ref = common.body(req, schemas.endpoint_create)["endpoint"]
    return common.member(req, "endpoint", catalog.create_endpoint(ref), views.endpoint, 201)


def get_endpoint(req):
    common.authorize(req, "identity:get_endpoint")
    return common.member(req, "endpoint", catalog.get_endpoint(req.params["endpoint_id"]),
                         views.endpoint)


def update_endpoint(req):
    common.authorize(req, "identity:update_endpoint")
    ref = common.body(req, schemas.endpoint_update)["endpoint"]
    return common.member(req, "endpoint",
                         catalog.update_endpoint(req.params["endpoint_id"], ref),
                         views.endpoint)


def delete_endpoint(req):
    common.authorize(req, "identity:delete_endpoint")
    catalog.delete_endpoint(req.params["endpoint_id"])
    return routing.empty()


# --- regions --------------------------------------------------------------------------

def list_regions(req):
    common.authorize(req, "identity:list_regions")
    found = catalog.list_regions(req.query.get("parent_region_id"))
    return common.collection(req, "regions", found, views.region)


def create_region(req):
    common.authorize(req, "identity:create_region")
    ref = common.body(req, schemas.region_create)["region"]
    return common.member(req, "region", catalog.create_region(ref), views.region, 201)


def create_region_with_id(req):
    """PUT /v3/regions/{region_id}: create with the id in the URL."""
    common.authorize(req, "identity:create_region")
    ref = common.body(req, schemas.region_create)["region"]
    region_id = req.params["region_id"]
    if ref.get("id") not in (None, region_id):
        from pocketstack.common import exceptions
        raise exceptions.ValidationError("The region id in the URL and in the body differ.")
    return common.member(req, "region", catalog.create_region(ref, region_id), views.region,
                         201)


def get_region(req):
    common.authorize(req, "identity:get_region")
    return common.member(req, "region", catalog.get_region(req.params["region_id"]),
                         views.region)


def update_region(req):
    common.authorize(req, "identity:update_region")
    ref = common.body(req, schemas.region_update)["region"]
    return common.member(req, "region", catalog.update_region(req.params["region_id"], ref),
                         views.region)


def delete_region(req):
    common.authorize(req, "identity:delete_region")
    catalog.delete_region(req.params["region_id"])
    return routing.empty()
