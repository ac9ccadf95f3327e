"""/v2.0/rbac-policies"""
from pocketstack.network import rbac
from pocketstack.network.rest import common


def list_policies(req):
    items, page = rbac.list_policies(req.context, common.params(req))
    return common.collection(req, rbac.COLLECTION, items, page, key="rbac_policies")


def create_policy(req):
    return common.created({"rbac_policy": rbac.create_policy(req.context, common.body(req))})


def show_policy(req):
    item = rbac.get_policy(req.context, req.params["rbac_policy_id"])
    return common.ok({"rbac_policy": common.select(item, req)})


def update_policy(req):
    return common.ok({"rbac_policy": rbac.update_policy(
        req.context, req.params["rbac_policy_id"], common.body(req))})


def delete_policy(req):
    rbac.delete_policy(req.context, req.params["rbac_policy_id"])
    return common.deleted()
