"""Identity tables: Keystone's model, simplified where Keystone's is historical."""
# No `from __future__ import annotations`: SQLAlchemy would then eval every Mapped[...]
# annotation string when the class is made (a sixth of the models' import time).

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow


class Domain(Base):
    __tablename__ = "identity_domains"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    description: Mapped[str] = mapped_column(sa.Text, default="")
    enabled: Mapped[bool] = mapped_column(default=True)
    tags: Mapped[list] = mapped_column(sa.JSON, default=list)
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class Project(Base):
    __tablename__ = "identity_projects"
    __table_args__ = (sa.UniqueConstraint("domain_id", "name", name="uq_project_domain_name"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    domain_id: Mapped[str] = mapped_column(sa.ForeignKey("identity_domains.id"))
    parent_id: Mapped[str | None] = mapped_column(sa.String(64), index=True)
    description: Mapped[str] = mapped_column(sa.Text, default="")
    enabled: Mapped[bool] = mapped_column(default=True)
    tags: Mapped[list] = mapped_column(sa.JSON, default=list)
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class User(Base):
    __tablename__ = "identity_users"
    __table_args__ = (sa.UniqueConstraint("domain_id", "name", name="uq_user_domain_name"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    domain_id: Mapped[str] = mapped_column(sa.ForeignKey("identity_domains.id"))
    enabled: Mapped[bool] = mapped_column(default=True)
    password_hash: Mapped[str | None] = mapped_column(sa.String(128))
    default_project_id: Mapped[str | None] = mapped_column(sa.String(64))
    description: Mapped[str] = mapped_column(sa.Text, default="")
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    password_expires_at: Mapped[dt.datetime | None] = mapped_column()
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Group(Base):
    __tablename__ = "identity_groups"
    __table_args__ = (sa.UniqueConstraint("domain_id", "name", name="uq_group_domain_name"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    domain_id: Mapped[str] = mapped_column(sa.ForeignKey("identity_domains.id"))
    description: Mapped[str] = mapped_column(sa.Text, default="")
    extra: Mapped[dict | None] = mapped_column(sa.JSON, default=dict)  # added in 0002


class GroupMembership(Base):
    __tablename__ = "identity_group_members"
    user_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_users.id", ondelete="CASCADE"), primary_key=True)
    group_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_groups.id", ondelete="CASCADE"), primary_key=True, index=True)


class Role(Base):
    __tablename__ = "identity_roles"
    __table_args__ = (sa.UniqueConstraint("name", "domain_id", name="uq_role_name_domain"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    # NULL for global roles; a unique constraint treats NULLs as distinct, so api.py checks
    # global-name uniqueness itself.
    domain_id: Mapped[str | None] = mapped_column(sa.String(64))
    description: Mapped[str] = mapped_column(sa.Text, default="")
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class ImpliedRole(Base):
    __tablename__ = "identity_implied_roles"
    prior_role_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_roles.id", ondelete="CASCADE"), primary_key=True)
    implied_role_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_roles.id", ondelete="CASCADE"), primary_key=True)


class Assignment(Base):
    """A role granted to a user or group on a project or domain (Keystone's 'assignment')."""
    __tablename__ = "identity_assignments"
    # UserProject, GroupProject, UserDomain, GroupDomain
    type: Mapped[str] = mapped_column(sa.String(16), primary_key=True)
    actor_id: Mapped[str] = mapped_column(sa.String(64), primary_key=True, index=True)
    target_id: Mapped[str] = mapped_column(sa.String(64), primary_key=True, index=True)
    role_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_roles.id", ondelete="CASCADE"), primary_key=True)
    inherited: Mapped[bool] = mapped_column(primary_key=True, default=False)


class Region(Base):
    __tablename__ = "identity_regions"
    id: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    description: Mapped[str] = mapped_column(sa.Text, default="")
    parent_region_id: Mapped[str | None] = mapped_column(sa.String(255))
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class Service(Base):
    __tablename__ = "identity_services"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    type: Mapped[str] = mapped_column(sa.String(255))
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    description: Mapped[str] = mapped_column(sa.Text, default="")
    enabled: Mapped[bool] = mapped_column(default=True)
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class Endpoint(Base):
    __tablename__ = "identity_endpoints"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    service_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_services.id", ondelete="CASCADE"))
    interface: Mapped[str] = mapped_column(sa.String(8))
    url: Mapped[str] = mapped_column(sa.Text)
    region_id: Mapped[str | None] = mapped_column(sa.String(255))
    enabled: Mapped[bool] = mapped_column(default=True)
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class ApplicationCredential(Base):
    __tablename__ = "identity_application_credentials"
    __table_args__ = (sa.UniqueConstraint("user_id", "name", name="uq_app_cred_user_name"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    user_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_users.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[str] = mapped_column(sa.String(64))
    secret_hash: Mapped[str] = mapped_column(sa.String(128))
    description: Mapped[str] = mapped_column(sa.Text, default="")
    expires_at: Mapped[dt.datetime | None] = mapped_column()
    unrestricted: Mapped[bool] = mapped_column(default=False)
    roles: Mapped[list] = mapped_column(sa.JSON, default=list)  # [{"id", "name", "domain_id"}]
    access_rules: Mapped[list] = mapped_column(sa.JSON, default=list)


class RevocationEvent(Base):
    """Tokens issued before ``issued_before`` that match every non-null field are revoked."""
    __tablename__ = "identity_revocation_events"
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[str | None] = mapped_column(sa.String(64))
    project_id: Mapped[str | None] = mapped_column(sa.String(64))
    domain_id: Mapped[str | None] = mapped_column(sa.String(64))
    audit_id: Mapped[str | None] = mapped_column(sa.String(32))
    app_cred_id: Mapped[str | None] = mapped_column(sa.String(64))
    trust_id: Mapped[str | None] = mapped_column(sa.String(64))  # added in 0004
    access_token_id: Mapped[str | None] = mapped_column(sa.String(64))  # added in 0006
    issued_before: Mapped[dt.datetime] = mapped_column()
    revoked_at: Mapped[dt.datetime] = mapped_column(default=utcnow, index=True)


class Credential(Base):
    """Keystone's credentials (/v3/credentials): an opaque blob a user keeps, such as EC2
    keys ({"access", "secret"}) for S3-style services."""
    __tablename__ = "identity_credentials"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_users.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[str | None] = mapped_column(sa.String(64))
    type: Mapped[str] = mapped_column(sa.String(255))
    blob: Mapped[str] = mapped_column(sa.Text)
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class RegisteredLimit(Base):
    """Unified limits: the default limit of a resource of a service (in a region)."""
    __tablename__ = "identity_registered_limits"
    __table_args__ = (sa.UniqueConstraint("service_id", "region_id", "resource_name",
                                          name="uq_registered_limit"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    # No foreign key, as keystone's table: deleting a service leaves its registered limits
    # (and the projects' limits of them) in place (foreign key dropped in 0007).
    service_id: Mapped[str] = mapped_column(sa.String(64))
    region_id: Mapped[str | None] = mapped_column(sa.String(255))
    resource_name: Mapped[str] = mapped_column(sa.String(255))
    default_limit: Mapped[int] = mapped_column()
    description: Mapped[str | None] = mapped_column(sa.Text)


class Limit(Base):
    """Unified limits: a project's (or domain's) own limit of a registered resource."""
    __tablename__ = "identity_limits"
    __table_args__ = (sa.UniqueConstraint("registered_limit_id", "project_id", "domain_id",
                                          name="uq_limit"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    registered_limit_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_registered_limits.id"), index=True)
    project_id: Mapped[str | None] = mapped_column(sa.String(64), index=True)
    domain_id: Mapped[str | None] = mapped_column(sa.String(64))
    resource_limit: Mapped[int] = mapped_column()
    description: Mapped[str | None] = mapped_column(sa.Text)


class PolicyBlob(Base):
    """Keystone's /v3/policies: policy documents stored for services to fetch."""
    __tablename__ = "identity_policies"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    type: Mapped[str] = mapped_column(sa.String(255))
    blob: Mapped[str] = mapped_column(sa.Text)
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class Trust(Base):
    """Keystone's OS-TRUST: the trustor delegates some of its roles on a project to the
    trustee, who then gets tokens scoped by the trust. Deleted with either user."""
    __tablename__ = "identity_trusts"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    trustor_user_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_users.id", ondelete="CASCADE"), index=True)
    trustee_user_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_users.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[str | None] = mapped_column(sa.String(64))
    impersonation: Mapped[bool] = mapped_column(default=False)
    expires_at: Mapped[dt.datetime | None] = mapped_column()
    remaining_uses: Mapped[int | None] = mapped_column()
    allow_redelegation: Mapped[bool] = mapped_column(default=False)
    redelegation_count: Mapped[int] = mapped_column(default=0)
    roles: Mapped[list] = mapped_column(sa.JSON, default=list)  # [{"id", "name", "domain_id"}]
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


# --- added in 0005: the extensions upstream clients still call ---------------------------

class AccessRule(Base):
    """An application credential access rule: (service, method, path) a credential may
    reach. Shared by a user's credentials as in Keystone (one row per identical rule)."""
    __tablename__ = "identity_access_rules"
    __table_args__ = (sa.UniqueConstraint("user_id", "service", "path", "method",
                                          name="uq_access_rule_user"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_users.id", ondelete="CASCADE"), index=True)
    service: Mapped[str] = mapped_column(sa.String(64))
    path: Mapped[str] = mapped_column(sa.String(256))
    method: Mapped[str] = mapped_column(sa.String(16))


class ProjectEndpoint(Base):
    """OS-EP-FILTER: an endpoint a project's catalog is limited to."""
    __tablename__ = "identity_project_endpoints"
    endpoint_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_endpoints.id", ondelete="CASCADE"), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(64), primary_key=True, index=True)


class EndpointGroup(Base):
    """OS-EP-FILTER: the endpoints matching ``filters`` (service_id, region_id,
    interface)."""
    __tablename__ = "identity_endpoint_groups"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    description: Mapped[str | None] = mapped_column(sa.Text)
    filters: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class ProjectEndpointGroup(Base):
    __tablename__ = "identity_project_endpoint_groups"
    endpoint_group_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_endpoint_groups.id", ondelete="CASCADE"), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(64), primary_key=True, index=True)


class IdentityProvider(Base):
    """OS-FEDERATION: stored as Keystone stores it; nothing here authenticates with it."""
    __tablename__ = "identity_idps"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    enabled: Mapped[bool] = mapped_column(default=True)
    description: Mapped[str | None] = mapped_column(sa.Text)
    domain_id: Mapped[str] = mapped_column(sa.String(64))
    authorization_ttl: Mapped[int | None] = mapped_column()
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class IdpRemoteId(Base):
    """A remote id belongs to one identity provider (the primary key says so)."""
    __tablename__ = "identity_idp_remote_ids"
    remote_id: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    idp_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_idps.id", ondelete="CASCADE"), index=True)


class FederationProtocol(Base):
    __tablename__ = "identity_federation_protocols"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    idp_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_idps.id", ondelete="CASCADE"), primary_key=True)
    mapping_id: Mapped[str] = mapped_column(sa.String(64))
    remote_id_attribute: Mapped[str | None] = mapped_column(sa.String(64))


class Mapping(Base):
    __tablename__ = "identity_mappings"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    rules: Mapped[list] = mapped_column(sa.JSON, default=list)
    schema_version: Mapped[str] = mapped_column(sa.String(5), default="1.0")


class ServiceProvider(Base):
    __tablename__ = "identity_service_providers"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    enabled: Mapped[bool] = mapped_column(default=False)
    description: Mapped[str | None] = mapped_column(sa.Text)
    auth_url: Mapped[str] = mapped_column(sa.String(256))
    sp_url: Mapped[str] = mapped_column(sa.String(256))
    relay_state_prefix: Mapped[str] = mapped_column(sa.String(256))


class OAuth1Consumer(Base):
    """OS-OAUTH1 consumers (the secret is shown once, at creation, as in Keystone).
    HMAC-SHA1 signatures are checked with the secret itself, so it is kept as Keystone
    keeps it; consumers made before it was kept (``secret`` null) cannot sign."""
    __tablename__ = "identity_oauth1_consumers"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    description: Mapped[str | None] = mapped_column(sa.Text)
    secret_hash: Mapped[str] = mapped_column(sa.String(128))
    secret: Mapped[str | None] = mapped_column(sa.String(64))  # added in 0006
    extra: Mapped[dict] = mapped_column(sa.JSON, default=dict)


class OAuth1RequestToken(Base):
    """A consumer's request for delegation on a project; a user authorizes it with some
    of its roles there (then ``verifier`` is set), the consumer trades it for an access
    token (and it is deleted)."""
    __tablename__ = "identity_oauth1_request_tokens"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    request_secret: Mapped[str] = mapped_column(sa.String(64))
    verifier: Mapped[str | None] = mapped_column(sa.String(64))
    authorizing_user_id: Mapped[str | None] = mapped_column(sa.String(64))
    requested_project_id: Mapped[str] = mapped_column(sa.String(64))
    role_ids: Mapped[list | None] = mapped_column(sa.JSON)
    consumer_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_oauth1_consumers.id", ondelete="CASCADE"), index=True)
    expires_at: Mapped[dt.datetime | None] = mapped_column()


class OAuth1AccessToken(Base):
    """The delegation itself: its holder (the consumer, with the secret) gets tokens of
    the authorizing user on the project with the authorized roles."""
    __tablename__ = "identity_oauth1_access_tokens"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    access_secret: Mapped[str] = mapped_column(sa.String(64))
    authorizing_user_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    project_id: Mapped[str] = mapped_column(sa.String(64))
    role_ids: Mapped[list] = mapped_column(sa.JSON)
    consumer_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_oauth1_consumers.id", ondelete="CASCADE"), index=True)
    expires_at: Mapped[dt.datetime | None] = mapped_column()


class DomainConfig(Base):
    """Domain-specific configuration (/v3/domains/{id}/config): one row per option."""
    __tablename__ = "identity_domain_config"
    domain_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_domains.id", ondelete="CASCADE"), primary_key=True)
    group: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    option: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    value: Mapped[str] = mapped_column(sa.JSON)
    sensitive: Mapped[bool] = mapped_column(default=False)
