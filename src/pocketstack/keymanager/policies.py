"""Barbican's default policies (barbican/common/policies/, the secure-RBAC defaults):
members of the owning project read and write its secrets and containers, unless the
object's ACL turned ``project-access`` off — then only its creator (and admins) may;
users an ACL names read the object from any project; admins of the owning project do
everything. Targets carry barbican's flattened keys (``target.secret.project_id``, …)."""
from oslo_policy import policy

_BASE = [
    ("secret_project_match", "project_id:%(target.secret.project_id)s"),
    ("secret_project_reader", "role:reader and rule:secret_project_match"),
    ("secret_project_member", "role:member and rule:secret_project_match"),
    ("secret_project_admin", "role:admin and rule:secret_project_match"),
    ("secret_owner", "user_id:%(target.secret.creator_id)s"),
    ("secret_is_not_private", "True:%(target.secret.read_project_access)s"),
    ("secret_acl_read", "'read':%(target.secret.read)s"),
    ("container_project_match", "project_id:%(target.container.project_id)s"),
    ("container_project_member", "role:member and rule:container_project_match"),
    ("container_project_admin", "role:admin and rule:container_project_match"),
    ("container_owner", "user_id:%(target.container.creator_id)s"),
    ("container_is_not_private", "True:%(target.container.read_project_access)s"),
    ("container_acl_read", "'read':%(target.container.read)s"),
    ("order_project_match", "project_id:%(target.order.project_id)s"),
    ("order_project_member", "role:member and rule:order_project_match"),
]


def _write(kind: str) -> str:
    return (f"rule:{kind}_project_admin or (rule:{kind}_project_member and rule:{kind}_owner)"
            f" or (rule:{kind}_project_member and rule:{kind}_is_not_private)")


def _read(kind: str) -> str:
    return f"{_write(kind)} or rule:{kind}_acl_read"


_RULES = {
    "secret:decrypt": _read("secret"),
    "secret:get": "role:admin or " + _read("secret"),
    "secret:put": _write("secret"),
    "secret:delete": "role:admin or " + _write("secret"),
    "secrets:post": "role:member",
    "secrets:get": "role:member",
    "secret_meta:get": _read("secret"),
    "secret_meta:post": _write("secret"),
    "secret_meta:put": _write("secret"),
    "secret_meta:delete": _write("secret"),
    "secret_consumers:get": _read("secret"),
    "secret_consumers:post": _read("secret"),
    "secret_consumers:delete": _read("secret"),
    "secret_acls:get": _write("secret"),
    "secret_acls:put_patch": _write("secret"),
    "secret_acls:delete": _write("secret"),
    "containers:post": "role:member",
    "containers:get": "role:member",
    "container:get": _read("container"),
    "container:delete": _write("container"),
    "container_secret:post": _write("container"),
    "container_secret:delete": _write("container"),
    "container_acls:get": _write("container"),
    "container_acls:put_patch": _write("container"),
    "container_acls:delete": _write("container"),
    "container_consumers:get": _read("container"),
    "container_consumers:post": _read("container"),
    "container_consumers:delete": _read("container"),
    "orders:get": "role:member",
    "orders:post": "role:member",
    "order:get": "rule:order_project_member",
    "order:delete": "rule:order_project_member",
    "quotas:get": "role:reader",
    "project_quotas:get": "role:admin",
    "project_quotas:put": "role:admin",
    "project_quotas:delete": "role:admin",
}


def list_rules():
    rules = [policy.RuleDefault(name, check) for name, check in _BASE]
    rules += [policy.RuleDefault(name, check, f"barbican's {name}")
              for name, check in _RULES.items()]
    return rules
