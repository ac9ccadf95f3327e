"""/v3/auth: issue, validate, revoke tokens; the catalog, projects and domains a token
may use."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.identity import auth, catalog, tokens
from pocketstack.identity.models import Assignment, Domain, GroupMembership, Project
from pocketstack.wsgi import routing


def _nocatalog(req) -> bool:
    return "nocatalog" in req.query


@routing.public
def issue_token(req):
    token_id, body = auth.authenticate(req.json(), nocatalog=_nocatalog(req))
    return routing.json_response(body, status=201, headers={"X-Subject-Token": token_id})


def _subject(req) -> str:
    subject = req.headers.get("x-subject-token")
    if not subject:
        raise exceptions.NotFound("Could not find token: X-Subject-Token is missing.")
    return subject


def _authorize_subject(req, subject_user_id: str) -> None:
    ctx = req.context
    if ctx.user_id != subject_user_id:
        policy.authorize(ctx, "identity:validate_token", {"user_id": subject_user_id})


def validate_token(req):
    subject = _subject(req)
    body = auth.validate_for_display(subject, nocatalog=_nocatalog(req))
    _authorize_subject(req, body["token"]["user"]["id"])
    return routing.json_response(body, headers={"X-Subject-Token": subject})


def revoke_token(req):
    subject = _subject(req)
    try:
        data = tokens.validate(subject)
    except exceptions.Unauthorized:
        raise exceptions.NotFound("Could not find token.") from None
    if req.context.user_id != data.user_id:
        policy.authorize(req.context, "identity:revoke_token", {"user_id": data.user_id})
    tokens.revoke(audit_id=data.audit_ids[0])
    return routing.empty()


def auth_catalog(req):
    ctx = req.context
    if not (ctx.project_id or ctx.domain_id or ctx.system_scope):
        raise exceptions.Forbidden("A scoped token is required to list the catalog.")
    return routing.json_response({
        "catalog": catalog.catalog(ctx.project_id, ctx.user_id),
        "links": {"self": f"{req.service_url}/v3/auth/catalog", "previous": None, "next": None}})


def _actor_ids(s, user_id: str) -> list[str]:
    return [user_id] + list(s.scalars(sa.select(GroupMembership.group_id)
                                      .where(GroupMembership.user_id == user_id)))


def auth_projects(req):
    with db.reader() as s:
        actors = _actor_ids(s, req.context.user_id)
        ids = set(s.scalars(sa.select(Assignment.target_id).where(
            Assignment.actor_id.in_(actors), Assignment.type.in_(("UserProject", "GroupProject")))))
        projects = s.scalars(sa.select(Project).where(Project.id.in_(ids),
                                                      Project.enabled.is_(True))).all()
        out = [{"id": p.id, "name": p.name, "domain_id": p.domain_id, "enabled": p.enabled,
                "description": p.description, "parent_id": p.parent_id or p.domain_id,
                "is_domain": False, "tags": p.tags or [],
                "links": {"self": f"{req.service_url}/v3/projects/{p.id}"}}
               for p in sorted(projects, key=lambda p: p.name)]
    return routing.json_response({"projects": out, "links": {
        "self": f"{req.service_url}/v3/auth/projects", "previous": None, "next": None}})


def auth_domains(req):
    with db.reader() as s:
        actors = _actor_ids(s, req.context.user_id)
        ids = set(s.scalars(sa.select(Assignment.target_id).where(
            Assignment.actor_id.in_(actors), Assignment.type.in_(("UserDomain", "GroupDomain")))))
        domains = s.scalars(sa.select(Domain).where(Domain.id.in_(ids),
                                                    Domain.enabled.is_(True))).all()
        out = [{"id": d.id, "name": d.name, "enabled": d.enabled, "description": d.description,
                "tags": d.tags or [], "links": {"self": f"{req.service_url}/v3/domains/{d.id}"}}
               for d in domains]
    return routing.json_response({"domains": out, "links": {
        "self": f"{req.service_url}/v3/auth/domains", "previous": None, "next": None}})
