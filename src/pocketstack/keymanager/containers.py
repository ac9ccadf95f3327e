"""Containers (generic, rsa, certificate) of named secret references, and their
consumers (what uses a container, e.g. a load balancer's listener)."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, timeutils
from pocketstack.keymanager import access, paging, quotas, secrets
from pocketstack.keymanager.models import Acl, Consumer, Container, ContainerSecret
from pocketstack.keymanager.validation import check_schema, require

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": ["string", "null"], "maxLength": 255},
        "type": {"type": "string", "enum": ["generic", "rsa", "certificate"]},
        "secret_refs": {"type": "array", "items": {
            "type": "object", "required": ["secret_ref"],
            "properties": {"name": {"type": ["string", "null"], "maxLength": 255},
                           "secret_ref": {"type": "string", "minLength": 1}}}},
    },
    "required": ["type"],
}
CONSUMER_SCHEMA = {
    "type": "object",
    "properties": {"URL": {"type": "string", "maxLength": 255, "minLength": 1},
                   "name": {"type": "string", "maxLength": 36, "minLength": 1}},
    "required": ["name", "URL"],
}
_NAMES = {  # type: (required names, optional names, barbican's two messages)
    "rsa": ({"public_key", "private_key"}, {"private_key_passphrase"},
            "only 'private_key', 'public_key' and 'private_key_passphrase' reference names "
            "are allowed for RSA type",
            "The minimum required reference names are 'public_key' and'private_key' for "
            "RSA type"),
    "certificate": ({"certificate"}, {"private_key", "private_key_passphrase", "intermediates"},
                    "only 'private_key', 'certificate' , 'private_key_passphrase',  or "
                    "'intermediates' reference names are allowed for Certificate type",
                    "The minimum required reference name is 'certificate' for Certificate "
                    "type"),
}


def _ref_id(ref: str) -> str:
    return ref.rstrip("/").rsplit("/", 1)[-1]


def validate(body, base: str) -> list[tuple[str | None, str]]:
    """barbican's ContainerValidator; the (name, secret id) pairs."""
    check_schema(body, SCHEMA, "Container")
    refs = body.get("secret_refs") or []
    names = {ref.get("name", "") for ref in refs}
    require(len(names) == len(refs), "Container", "Duplicate reference names are not allowed",
            "secret_refs")
    require(len({_ref_id(r["secret_ref"]) for r in refs}) == len(refs), "Container",
            "Duplicate secret ids are not allowed", "secret_refs")
    for ref in refs:
        if not ref["secret_ref"].startswith(base + "/"):  # no refs to another service
            raise exceptions.BadRequest("Provided field value is not supported")
    if refs and body["type"] in _NAMES:
        required, optional, unsupported, minimum = _NAMES[body["type"]]
        require(not names - required - optional, "Container", unsupported, "secret_refs")
        require(required <= names, "Container", minimum, "secret_refs")
    return [(ref.get("name"), _ref_id(ref["secret_ref"])) for ref in refs]


def create(ctx, body, base: str, *, pairs=None) -> str:
    """A new container; ``pairs``: (name, secret id) an order made (already checked)."""
    if pairs is None:
        pairs = validate(body, base)
    now = timeutils.utcnow()
    container = Container(id=str(uuid.uuid4()), project_id=ctx.project_id,
                          creator_id=ctx.user_id, name=body.get("name"), type=body["type"],
                          created=now, updated=now)
    with db.transaction() as s:
        quotas.enforce(s, ctx.project_id, "containers", "Container creation")
        for name, secret_id in pairs:
            secret = _project_secret(s, secret_id, ctx.project_id)
            if secret is None:
                raise exceptions.NotFound(f"Secret provided for '{name}' doesn't exist.")
        s.add(container)
        s.flush()
        for name, secret_id in pairs:
            s.add(ContainerSecret(id=str(uuid.uuid4()), container_id=container.id,
                                  secret_id=secret_id, name=name))
    return container.id


def _project_secret(s, secret_id: str, project_id: str):
    try:
        uuid.UUID(secret_id)
    except ValueError:
        return None
    from pocketstack.keymanager.models import Secret

    return s.scalar(sa.select(Secret).where(Secret.id == secret_id,
                                            Secret.project_id == project_id,
                                            secrets._alive()))


def lookup(s, container_id: str) -> Container:
    try:
        uuid.UUID(container_id)
    except ValueError:
        raise exceptions.NotFound("Not Found. Provided container id is invalid.") from None
    container = s.get(Container, container_id)
    if container is None:
        raise exceptions.NotFound("Secrets container not found.")
    return container


def authorized(s, ctx, container_id: str, action: str, operation: str) -> Container:
    container = lookup(s, container_id)
    access.enforce(ctx, action, operation, "container", container,
                   access.acls_of(s, "container", container.id))
    return container


def view(s, base: str, c: Container) -> dict:
    refs = s.scalars(sa.select(ContainerSecret).where(ContainerSecret.container_id == c.id)
                     .order_by(ContainerSecret.name))
    consumers = s.scalars(sa.select(Consumer).where(Consumer.container_id == c.id)
                          .order_by(Consumer.created))
    return {
        "status": "ACTIVE", "name": c.name, "type": c.type, "creator_id": c.creator_id,
        "created": timeutils.isotime_naive(c.created),
        "updated": timeutils.isotime_naive(c.updated),
        "container_ref": f"{base}/v1/containers/{c.id}",
        "secret_refs": [{"name": r.name, "secret_ref": f"{base}/v1/secrets/{r.secret_id}"}
                        for r in refs],
        "consumers": [{"name": x.name, "URL": x.url} for x in consumers],
    }


def show(ctx, container_id: str, base: str) -> dict:
    with db.reader() as s:
        return view(s, base, authorized(s, ctx, container_id, "container:get",
                                        "Container retrieval"))


def list_containers(ctx, query, base: str) -> dict:
    offset, limit = paging.clean(query.get("offset"), query.get("limit"))
    conditions = [Container.project_id == ctx.project_id]
    if query.get("name"):
        conditions.append(Container.name == query["name"])
    if query.get("type"):
        conditions.append(Container.type == query["type"])
    with db.reader() as s:
        total = s.scalar(sa.select(sa.func.count()).select_from(Container).where(*conditions))
        rows = list(s.scalars(sa.select(Container).where(*conditions)
                              .order_by(Container.created).offset(offset).limit(limit)))
        items = [view(s, base, c) for c in rows]
    return paging.page(base, "containers", items, offset, limit, total, query)


def delete(ctx, container_id: str) -> None:
    with db.transaction() as s:
        container = authorized(s, ctx, container_id, "container:delete", "Container deletion")
        for model, column in ((ContainerSecret, ContainerSecret.container_id),
                              (Consumer, Consumer.container_id)):
            s.execute(sa.delete(model).where(column == container.id))
        s.execute(sa.delete(Acl).where(Acl.entity_type == "container",
                                       Acl.entity_id == container.id))
        s.delete(container)


# --- secrets of a generic container ------------------------------------------------------

SECRET_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": ["string", "null"], "maxLength": 255},
                   "secret_ref": {"type": "string", "minLength": 1}},
    "required": ["secret_ref"],
}


def add_secret(ctx, container_id: str, body) -> None:
    with db.transaction() as s:
        container = authorized(s, ctx, container_id, "container_secret:post",
                               "Container Secret creation")
        if container.type != "generic":
            raise exceptions.BadRequest("Only 'generic' containers can be modified.")
        check_schema(body, SECRET_SCHEMA, "ContainerSecret")
        name, secret_id = body.get("name"), _ref_id(body["secret_ref"])
        if _project_secret(s, secret_id, ctx.project_id) is None:
            raise exceptions.NotFound("Secret provided doesn't exist.")
        if _entries(s, container.id, secret_id, name):
            raise exceptions.Conflict(
                "Conflict. A secret with that name and ID is already stored in this "
                "container. The same secret can exist in a container as long as the name "
                "is unique.")
        s.add(ContainerSecret(id=str(uuid.uuid4()), container_id=container.id,
                              secret_id=secret_id, name=name))
        container.updated = timeutils.utcnow()


def remove_secret(ctx, container_id: str, body) -> None:
    with db.transaction() as s:
        container = authorized(s, ctx, container_id, "container_secret:delete",
                               "Container Secret deletion")
        check_schema(body, SECRET_SCHEMA, "ContainerSecret")
        name, secret_id = body.get("name"), _ref_id(body["secret_ref"])
        if _project_secret(s, secret_id, ctx.project_id) is None:
            raise exceptions.NotFound(f"Secret '{name}' with reference "
                                      f"'{body['secret_ref']}' doesn't exist.")
        found = _entries(s, container.id, secret_id, name)
        if not found:
            raise exceptions.NotFound("Secret provided is not in the container")
        for entry in found:
            s.delete(entry)
        container.updated = timeutils.utcnow()


def _entries(s, container_id: str, secret_id: str, name) -> list[ContainerSecret]:
    name_is = ContainerSecret.name.is_(None) if name is None else ContainerSecret.name == name
    return list(s.scalars(sa.select(ContainerSecret).where(
        ContainerSecret.container_id == container_id, ContainerSecret.secret_id == secret_id,
        name_is)))


# --- consumers -----------------------------------------------------------------------------

def list_consumers(ctx, container_id: str, query, base: str) -> dict:
    offset, limit = paging.clean(query.get("offset"), query.get("limit"))
    with db.reader() as s:
        container = authorized(s, ctx, container_id, "container_consumers:get",
                               "ContainerConsumers(s) retrieval")
        where = Consumer.container_id == container.id
        total = s.scalar(sa.select(sa.func.count()).select_from(Consumer).where(where))
        rows = s.scalars(sa.select(Consumer).where(where).order_by(Consumer.created)
                         .offset(offset).limit(limit))
        items = [{"name": c.name, "URL": c.url, "status": "ACTIVE",
                  "created": timeutils.isotime_naive(c.created),
                  "updated": timeutils.isotime_naive(c.updated)} for c in rows]
    body = paging.page(base, f"containers/{container_id}/consumers", items, offset, limit,
                       total, query)
    return {"consumers": body.pop(f"containers/{container_id}/consumers"), **body}


def add_consumer(ctx, container_id: str, body, base: str) -> dict:
    check_schema(body, CONSUMER_SCHEMA, "Consumer")
    now = timeutils.utcnow()
    with db.transaction() as s:
        container = authorized(s, ctx, container_id, "container_consumers:post",
                               "ContainerConsumer creation")
        quotas.enforce(s, ctx.project_id, "consumers", "ContainerConsumer creation")
        existing = s.scalar(sa.select(Consumer).where(
            Consumer.container_id == container.id, Consumer.name == body["name"],
            Consumer.url == body["URL"]))
        if existing is None:  # registering again is no error (create_or_update_from)
            s.add(Consumer(id=str(uuid.uuid4()), container_id=container.id,
                           project_id=ctx.project_id, name=body["name"], url=body["URL"],
                           created=now, updated=now))
        else:
            existing.updated = now
        s.flush()
        return view(s, base, container)


def remove_consumer(ctx, container_id: str, body, base: str) -> dict:
    check_schema(body, CONSUMER_SCHEMA, "Consumer")
    with db.transaction() as s:
        container = authorized(s, ctx, container_id, "container_consumers:delete",
                               "ContainerConsumer deletion")
        consumer = s.scalar(sa.select(Consumer).where(
            Consumer.container_id == container.id, Consumer.name == body["name"],
            Consumer.url == body["URL"]))
        if consumer is None:
            raise exceptions.NotFound("Consumer not found.")
        if consumer.project_id != ctx.project_id and container.project_id != ctx.project_id:
            raise exceptions.Forbidden("Not Allowed. Sorry, only the creator of a consumer "
                                       "can delete it.")
        s.delete(consumer)
        s.flush()
        return view(s, base, container)
