"""/v2.0/quotas"""
from pocketstack.network import quotas
from pocketstack.network.rest import common


def list_quotas(req):
    return common.ok(quotas.list_quotas(req.context))


def show_tenant(req):
    """The caller's own project (python-neutronclient asks before a quota operation)."""
    return common.ok({"tenant": {"tenant_id": req.context.project_id}})


def show_quota(req):
    return common.ok(quotas.get_quota(req.context, req.params["project_id"]))


def show_default(req):
    return common.ok(quotas.get_default(req.context, req.params["project_id"]))


def show_details(req):
    return common.ok(quotas.get_details(req.context, req.params["project_id"]))


def update_quota(req):
    return common.ok(quotas.update_quota(req.context, req.params["project_id"],
                                         common.body(req)))


def delete_quota(req):
    quotas.delete_quota(req.context, req.params["project_id"])
    return common.deleted()
