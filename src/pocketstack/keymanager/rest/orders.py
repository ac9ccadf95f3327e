"""/v1/orders: thin handlers over keymanager.orders."""
from __future__ import annotations

from pocketstack.keymanager import access, orders
from pocketstack.keymanager.rest.util import base, created, json_body
from pocketstack.wsgi import routing


def create(req):
    access.enforce_plain(req.context, "orders:post", "Order creation")
    return created(req, "order", orders.create(req.context, json_body(req), base(req)), 202)


def list_orders(req):
    access.enforce_plain(req.context, "orders:get", "Order(s) retrieval")
    return routing.json_response(orders.list_orders(req.context, req.query, base(req)))


def show(req):
    return routing.json_response(orders.show(req.context, req.params["order_id"], base(req)))


def delete(req):
    orders.delete(req.context, req.params["order_id"])
    return routing.empty(204)
