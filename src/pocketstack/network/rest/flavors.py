"""/v2.0/flavors, /v2.0/service_profiles and a flavor's service_profiles."""
from pocketstack.network import flavors
from pocketstack.network.rest import common
from pocketstack.network.rest.inventory import _filters


def list_flavors(req):
    items = flavors.list_flavors(req.context, _filters(req))
    return common.ok({"flavors": [common.select(i, req) for i in items]})


def create_flavor(req):
    return common.created({"flavor": flavors.create_flavor(req.context, common.body(req))})


def show_flavor(req):
    return common.ok({"flavor": common.select(
        flavors.get_flavor(req.context, req.params["flavor_id"]), req)})


def update_flavor(req):
    return common.ok({"flavor": flavors.update_flavor(req.context, req.params["flavor_id"],
                                                      common.body(req))})


def delete_flavor(req):
    flavors.delete_flavor(req.context, req.params["flavor_id"])
    return common.deleted()


def list_profiles(req):
    items = flavors.list_profiles(req.context, _filters(req))
    return common.ok({"service_profiles": [common.select(i, req) for i in items]})


def create_profile(req):
    return common.created({"service_profile": flavors.create_profile(req.context,
                                                                     common.body(req))})


def show_profile(req):
    return common.ok({"service_profile": common.select(
        flavors.get_profile(req.context, req.params["profile_id"]), req)})


def update_profile(req):
    return common.ok({"service_profile": flavors.update_profile(
        req.context, req.params["profile_id"], common.body(req))})


def delete_profile(req):
    flavors.delete_profile(req.context, req.params["profile_id"])
    return common.deleted()


def associate(req):
    return common.created({"service_profile": flavors.associate(
        req.context, req.params["flavor_id"], common.body(req))})


def show_binding(req):
    return common.ok({"service_profile": flavors.get_binding(
        req.context, req.params["flavor_id"], req.params["profile_id"])})


def disassociate(req):
    flavors.disassociate(req.context, req.params["flavor_id"], req.params["profile_id"])
    return common.deleted()
