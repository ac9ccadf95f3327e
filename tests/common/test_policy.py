"""oslo.policy wiring: in-code defaults apply, policy.yaml in the data dir overrides them."""
from __future__ import annotations

import time

import pytest

from pocketstack.common import exceptions, policy
from pocketstack.common.context import RequestContext


@pytest.fixture
def policy_dir(cloud, tmp_path):
    """Point the process's policy (configured by the running cloud) at ``tmp_path`` for
    one test, then back at the cloud's data dir."""
    policy.configure(str(tmp_path))
    yield tmp_path
    policy.configure(cloud.data_dir)


def _ctx(*roles, project_id="p1", user_id="u1"):
    return RequestContext(user_id=user_id, project_id=project_id, roles=list(roles))


def test_default_rules_are_loaded_and_enforced(policy_dir):
    assert len(policy.enforcer().rules) >= len(policy.base_rules())
    policy.authorize(_ctx("admin", "member", "reader"), "admin_required")
    with pytest.raises(exceptions.Forbidden):
        policy.authorize(_ctx("member", "reader"), "admin_required")
    assert policy.check(_ctx("member"), "admin_or_member", {"project_id": "p1"})
    assert not policy.check(_ctx("member"), "admin_or_member", {"project_id": "p2"})
    assert policy.check(_ctx("reader"), "admin_or_reader", {"project_id": "p1"})
    assert not policy.check(_ctx("reader"), "admin_or_member", {"project_id": "p1"})


def test_every_service_rule_is_registered(policy_dir):
    names = set(policy.enforcer().registered_rules)
    assert {"admin_required", "project_member", "owner"} <= names
    assert any(name.startswith("identity:") for name in names)


def test_internal_context_is_always_allowed(policy_dir):
    policy.authorize(RequestContext.admin(), "admin_required")


def test_policy_yaml_in_the_data_dir_overrides_a_default(policy_dir):
    (policy_dir / "policy.yaml").write_text('"admin_required": "role:superuser"\n')
    policy.configure(str(policy_dir))
    assert not policy.check(_ctx("admin"), "admin_required")
    assert policy.check(_ctx("superuser"), "admin_required")
    # Rules not named in the file keep their defaults.
    assert policy.check(_ctx("member"), "project_member", {"project_id": "p1"})


def test_an_edited_policy_yaml_applies_without_a_restart(policy_dir):
    assert policy.check(_ctx("admin"), "admin_required")
    (policy_dir / "policy.yaml").write_text('"admin_required": "role:superuser"\n')
    deadline = time.monotonic() + 10
    while policy.check(_ctx("admin"), "admin_required") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert policy.check(_ctx("superuser"), "admin_required")
    assert not policy.check(_ctx("admin"), "admin_required")


def test_a_broken_edit_keeps_the_rules_in_force(policy_dir):
    (policy_dir / "policy.yaml").write_text('"admin_required": "role:superuser"\n')
    policy.configure(str(policy_dir))
    assert policy.check(_ctx("superuser"), "admin_required")
    (policy_dir / "policy.yaml").write_text('"admin_required": [unclosed\n')
    time.sleep(policy.RECHECK_SECONDS + 0.1)
    assert policy.check(_ctx("superuser"), "admin_required")
