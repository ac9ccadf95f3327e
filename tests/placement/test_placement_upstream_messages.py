"""Placement's own words where clients show them: a stale generation on a provider's
aggregates (1.19+). Through openstacksdk and keystoneauth1."""
from __future__ import annotations

import uuid

import pytest
from openstack import exceptions as sdk_exc

from placement_helpers import error_code

MESSAGE = ("Resource provider's generation already changed. Please update the generation "
           "and try again.")


def test_stale_generation_on_aggregates_answers_placements_message(cloud, placement):
    conn = cloud.sdk()
    rp = conn.placement.create_resource_provider(name=f"rp-{uuid.uuid4().hex[:12]}")
    agg1, agg2 = str(uuid.uuid4()), str(uuid.uuid4())
    done = conn.placement.set_resource_provider_aggregates(rp, agg1)
    assert done.aggregates == [agg1]
    # `rp` still holds generation 0: the provider moved on
    with pytest.raises(sdk_exc.ConflictException) as caught:
        conn.placement.set_resource_provider_aggregates(rp, agg2)
    answer = caught.value.response.json()["errors"][0]
    assert MESSAGE in answer["detail"]  # (the code shows from 1.23, which the sdk skips)
    r = placement.put(f"/resource_providers/{rp.id}/aggregates",
                      {"aggregates": [agg2], "resource_provider_generation": 0})
    assert r.status_code == 409 and error_code(r) == "placement.concurrent_update"
    assert MESSAGE in r.json()["errors"][0]["detail"]
    assert placement.get(f"/resource_providers/{rp.id}/aggregates").json()[
        "aggregates"] == [agg1]
    conn.placement.delete_resource_provider(rp)
