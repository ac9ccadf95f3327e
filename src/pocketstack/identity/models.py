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
    service_id: Mapped[str] = mapped_column(
        sa.ForeignKey("identity_services.id", ondelete="CASCADE"))
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
