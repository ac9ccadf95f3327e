"""Load glance's seeded metadata definitions into a database (migration image_0003), as
``glance-manage db_load_metadefs``: each namespace with its resource type associations,
objects and properties; owner ``admin``; resource types created protected. Runs once, when
the tables are created, so a namespace an admin deletes later stays deleted."""
from __future__ import annotations

import json
import os

import sqlalchemy as sa

from pocketstack.common.timeutils import utcnow

DATA = os.path.join(os.path.dirname(__file__), "glance_metadefs.json")


def documents() -> list[dict]:
    with open(DATA, encoding="utf-8") as f:
        return json.load(f)["namespaces"]


def _table(name: str, *columns: str, json: tuple = ()) -> sa.TableClause:
    # Declared, not reflected: a reflected MariaDB JSON column is LONGTEXT and would not
    # serialize dicts.
    cols = [sa.column(c) for c in columns] + [sa.column(c, sa.JSON) for c in json]
    cols += [sa.column("created_at"), sa.column("updated_at")]
    return sa.table(f"image_metadef_{name}", *cols)


TABLES = {
    "namespaces": _table("namespaces", "id", "namespace", "display_name", "description",
                         "visibility", "protected", "owner"),
    "resource_types": _table("resource_types", "id", "name", "protected"),
    "associations": _table("associations", "resource_type_id", "namespace_id",
                           "properties_target", "prefix"),
    "objects": _table("objects", "namespace_id", "name", "description",
                      json=("required", "properties")),
    "properties": _table("properties", "namespace_id", "name", json=("schema",)),
    "tags": _table("tags", "namespace_id", "name"),
}


def _insert(conn, table: sa.TableClause, key: str | None = None, **values) -> int | None:
    """Insert a row; with ``key`` (a unique column), the new row's id."""
    conn.execute(table.insert().values(**values))
    if key is None:
        return None
    return conn.scalar(sa.select(table.c.id).where(table.c[key] == values[key]))


def load(conn) -> None:
    t = TABLES
    now = utcnow()
    types: dict[str, int] = {}
    for doc in documents():
        ns_id = _insert(conn, t["namespaces"], "namespace",
            namespace=doc["namespace"], display_name=doc.get("display_name"),
            description=doc.get("description"),
            # glance stores NULL; only the owner (admin) sees such a namespace either way
            visibility=doc.get("visibility") or "private",
            protected=bool(doc.get("protected")), owner=doc.get("owner", "admin"),
            created_at=now, updated_at=now)
        for assoc in doc.get("resource_type_associations", []):
            name = assoc["name"]
            if name not in types:
                types[name] = _insert(conn, t["resource_types"], "name", name=name, protected=True,
                                      created_at=now, updated_at=now)
            _insert(conn, t["associations"],
                resource_type_id=types[name], namespace_id=ns_id,
                properties_target=assoc.get("properties_target"), prefix=assoc.get("prefix"),
                created_at=now, updated_at=now)
        for obj in doc.get("objects", []):
            _insert(conn, t["objects"],
                namespace_id=ns_id, name=obj["name"], description=obj.get("description"),
                required=obj.get("required", []), properties=obj.get("properties", {}),
                created_at=now, updated_at=now)
        for name, schema in doc.get("properties", {}).items():
            _insert(conn, t["properties"], namespace_id=ns_id, name=name, schema=schema,
                    created_at=now, updated_at=now)
        for tag in doc.get("tags", []):
            _insert(conn, t["tags"], namespace_id=ns_id, name=tag["name"], created_at=now,
                    updated_at=now)
