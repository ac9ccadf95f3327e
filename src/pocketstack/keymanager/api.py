"""What other services and the CLI call: the key manager's logic, by module.

secrets     create, show, payload, put_payload, delete, list_secrets, consumers
metadata    a secret's user metadata
containers  create, show, delete, list_containers, consumers
acls        get, update, delete (of a secret or container)
orders      create, show, delete, list_orders
quotas      defaults, set_project, get_project, delete_project, list_projects
"""
from pocketstack.keymanager import (acls, containers, metadata, orders, quotas,  # noqa: F401
                                    secrets)
