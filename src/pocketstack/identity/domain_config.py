"""Domain-specific configuration (/v3/domains/{id}/config), Keystone's DomainConfigManager:
the [identity] and [ldap] options Keystone lets a domain override, stored per option;
``ldap.password`` is sensitive (stored, never shown).

pocketstack keeps every user in SQL: the options are recorded and returned, no LDAP
backend reads them.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity.models import DomainConfig

# Keystone's whitelisted options and their defaults (keystone/conf/identity.py, ldap.py).
LDAP_DEFAULTS = {
    "url": "ldap://localhost", "user": None, "suffix": "cn=example,cn=com",
    "query_scope": "one", "page_size": 0, "alias_dereferencing": "default",
    "debug_level": None, "chase_referrals": None, "user_tree_dn": None, "user_filter": None,
    "user_objectclass": "inetOrgPerson", "user_id_attribute": "cn",
    "user_name_attribute": "sn", "user_mail_attribute": "mail",
    "user_description_attribute": "description", "user_pass_attribute": "userPassword",
    "user_enabled_attribute": "enabled", "user_enabled_invert": False,
    "user_enabled_mask": 0, "user_enabled_default": "True",
    "user_attribute_ignore": ["default_project_id"],
    "user_default_project_id_attribute": None, "user_enabled_emulation": False,
    "user_enabled_emulation_dn": None, "user_enabled_emulation_use_group_config": False,
    "user_additional_attribute_mapping": [], "group_tree_dn": None, "group_filter": None,
    "group_objectclass": "groupOfNames", "group_id_attribute": "cn",
    "group_name_attribute": "ou", "group_members_are_ids": False,
    "group_member_attribute": "member", "group_desc_attribute": "description",
    "group_attribute_ignore": [], "group_additional_attribute_mapping": [],
    "tls_cacertfile": None, "tls_cacertdir": None, "use_tls": False,
    "tls_req_cert": "demand", "use_pool": True, "pool_size": 10, "pool_retry_max": 3,
    "pool_retry_delay": 0.1, "pool_connection_timeout": -1,
    "pool_connection_lifetime": 600, "use_auth_pool": True, "auth_pool_size": 100,
    "auth_pool_connection_lifetime": 60,
}
DEFAULTS = {"identity": {"driver": "sql", "list_limit": None}, "ldap": LDAP_DEFAULTS}
SENSITIVE = {"identity": (), "ldap": ("password",)}
SECURITY_COMPLIANCE = ("password_regex", "password_regex_description")


def _invalid(reason: str) -> exceptions.Forbidden:
    return exceptions.Forbidden(f"Invalid domain specific configuration: {reason}.")


def _not_found(domain_id: str, group=None, option=None) -> exceptions.NotFound:
    what = (f"option {option} in group {group}" if option else
            f"group {group}" if group else "any options")
    return exceptions.NotFound(f"Could not find {what} in domain configuration for domain "
                               f"{domain_id}.")


def check_group_option(group: str | None, option: str | None) -> None:
    if group is None:
        return
    if group not in DEFAULTS:
        raise _invalid(f"Group {group} is not supported for domain specific configurations")
    if option is not None and option not in DEFAULTS[group] \
            and option not in SENSITIVE[group]:
        raise _invalid(f"Option {option} in group {group} is not supported for domain "
                       "specific configurations")


def check_config(config) -> None:
    if not config or not isinstance(config, dict):
        raise _invalid("No options specified")
    for group, options in config.items():
        if not options or not isinstance(options, dict):
            raise _invalid(f"The value of group {group} specified in the config should be a "
                           "dictionary of options")
        for option in options:
            check_group_option(group, option)


def _rows(s, domain_id, group=None, option=None) -> list[DomainConfig]:
    q = sa.select(DomainConfig).where(DomainConfig.domain_id == domain_id)
    if group is not None:
        q = q.where(DomainConfig.group == group)
    if option is not None:
        q = q.where(DomainConfig.option == option)
    return list(s.scalars(q.order_by(DomainConfig.group, DomainConfig.option)))


def _as_config(rows, option: str | None = None) -> dict:
    shown = [r for r in rows if not r.sensitive]
    if option is not None:
        return {r.option: r.value for r in shown}
    out: dict = {}
    for r in shown:
        out.setdefault(r.group, {})[r.option] = r.value
    return out


def _write(s, domain_id: str, config: dict) -> None:
    for group, options in config.items():
        for option, value in options.items():
            row = s.get(DomainConfig, (domain_id, group, option))
            if row is None:
                s.add(DomainConfig(domain_id=domain_id, group=group, option=option,
                                   value=value, sensitive=option in SENSITIVE[group]))
            else:
                row.value = value


def create(domain_id: str, config: dict) -> tuple[dict, bool]:
    """Replace the whole configuration; (shown config, whether there was none before)."""
    check_config(config)
    with db.transaction() as s:
        existed = bool(_rows(s, domain_id))
        s.execute(sa.delete(DomainConfig).where(DomainConfig.domain_id == domain_id))
        s.flush()
        _write(s, domain_id, config)
        s.flush()
        return _as_config(_rows(s, domain_id)), not existed


def get(domain_id: str, group=None, option=None) -> dict:
    check_group_option(group, option)
    with db.reader() as s:
        shown = _as_config(_rows(s, domain_id, group, option), option)
    if not shown:
        raise _not_found(domain_id, group, option)
    return shown


def update(domain_id: str, config, group=None, option=None) -> dict:
    """Merge ``config`` in; with a group (and option) in the URL only that part, which
    must exist already, as Keystone."""
    if group is not None and option is not None:
        config = {group: config} if isinstance(config, dict) else config
    check_config(config)
    check_group_option(group, option)
    if group is not None:
        if list(config) != [group] or (option is not None and list(config[group]) != [option]):
            raise _invalid(f"Trying to update {'option ' + option + ' in ' if option else ''}"
                           f"group {group}, so that, and only that, "
                           f"{'option' if option else 'group'} must be specified in the "
                           "config")
    with db.transaction() as s:
        if group is not None and not _rows(s, domain_id, group, option):
            raise _not_found(domain_id, group, option)
        _write(s, domain_id, config)
        s.flush()
        return _as_config(_rows(s, domain_id))


def delete(domain_id: str, group=None, option=None) -> None:
    check_group_option(group, option)
    with db.transaction() as s:
        rows = _rows(s, domain_id, group, option)
        if group is not None and not rows:
            raise _not_found(domain_id, group, option)
        for row in rows:
            s.delete(row)


def defaults(group=None, option=None) -> dict:
    check_group_option(group, option)
    if option is not None:
        if option not in DEFAULTS[group]:
            raise _invalid(f"Reading the default for option {option} in group {group} is not "
                           "supported")
        return {option: DEFAULTS[group][option]}
    if group is not None:
        return {group: dict(DEFAULTS[group])}
    return {g: dict(options) for g, options in DEFAULTS.items()}


def security_compliance(domain_id: str, default_domain_id: str, option=None) -> dict:
    """Only the default domain's password rules, and only these two (Keystone); pocketstack
    enforces no password regex, so both are null."""
    if domain_id != default_domain_id:
        raise _invalid("Reading security compliance information for any domain other than "
                       "the default domain is not allowed or supported.")
    if option is not None and option not in SECURITY_COMPLIANCE:
        raise _invalid("Reading security compliance values other than password_regex and "
                       "password_regex_description is not allowed.")
    if option is not None:
        return {option: None}
    return {"security_compliance": {name: None for name in SECURITY_COMPLIANCE}}
