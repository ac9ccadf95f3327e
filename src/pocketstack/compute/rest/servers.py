"""/servers: create, list (+detail, filters, paging, sort), show, update, delete."""
from __future__ import annotations

import base64
import datetime as dt
import re

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.compute import actions, api, instances, states
from pocketstack.compute.models import Instance, InstanceTag
from pocketstack.compute.rest import server_schemas, views
from pocketstack.compute.rest.common import (at_least, authorize, body, bool_from_string,
                                             changes_window, limit_marker, links,
                                             next_link, respond, to_bool, version)


def canonical_ipv6(value: str | None) -> str | None:
    """accessIPv6 as nova stores it: the address's canonical (compressed) form."""
    import ipaddress

    return str(ipaddress.IPv6Address(value)) if value else value


def _ref(value) -> str:
    """imageRef/flavorRef may be hrefs: keep the last path segment, as nova does."""
    return str(value).rstrip("/").rsplit("/", 1)[-1]


def create_server(req):
    ctx = req.context
    authorize(req, "os_compute_api:servers:create")
    data = body(req, server_schemas.create_schema(version(req)))
    s = data["server"]
    hints = data.get("os:scheduler_hints") or data.get("OS-SCH-HNT:scheduler_hints") or {}
    networks = s.get("networks")
    if isinstance(networks, list):
        networks = [{"uuid": n.get("uuid"), "port": n.get("port"),
                     "fixed_ip": n.get("fixed_ip"), "tag": n.get("tag")} for n in networks]
    user_data = s.get("user_data")
    if user_data is not None:
        try:
            base64.b64decode(user_data, validate=True)
        except ValueError:
            raise exceptions.BadRequest("User data needs to be valid base 64.") from None
    zone = s.get("availability_zone")
    if s.get("host") or s.get("hypervisor_hostname"):
        policy.authorize(ctx, "os_compute_api:servers:create:forced_host")
        zone = f"{zone or ''}:{s.get('host') or ''}:{s.get('hypervisor_hostname') or ''}"
    image_ref = s.get("imageRef") or ""
    params = {
        "name": s["name"], "image_ref": _ref(image_ref) if image_ref else "",
        "flavor_ref": _ref(s["flavorRef"]), "networks": networks,
        "security_groups": [g["name"] for g in s.get("security_groups") or [] if "name" in g],
        "key_name": s.get("key_name"), "metadata": s.get("metadata") or {},
        "user_data": user_data, "personality": s.get("personality") or [],
        "availability_zone": zone, "min_count": int(s.get("min_count", 1)),
        "max_count": int(s.get("max_count", s.get("min_count", 1))),
        # v2 and legacy mappings (block_devices.parse refuses both at once)
        "block_device_mapping": list(s.get("block_device_mapping_v2") or []),
        "legacy_bdm": list(s.get("block_device_mapping") or []),
        "config_drive": to_bool(s.get("config_drive", False)),
        "admin_pass": s.get("adminPass"), "description": s.get("description"),
        "tags": s.get("tags") or [], "hints": hints, "access_ip_v4": s.get("accessIPv4"),
        "access_ip_v6": canonical_ipv6(s.get("accessIPv6")),
        "disk_config": s.get("OS-DCF:diskConfig", "MANUAL"),
        "hostname": s.get("hostname"),  # 2.90 (the schema refuses it before)
    }
    if params["hostname"] and params["max_count"] > 1:
        raise exceptions.BadRequest("Unable to allocate a single hostname to multiple "
                                    "instances")
    rows, reservation_id, admin_pass = api.create(ctx, params)
    if to_bool(s.get("return_reservation_id", False)):
        return respond(req, {"reservation_id": reservation_id}, 202)
    inst = rows[0]
    server = {"id": inst.uuid, "links": links(req, "servers", inst.uuid),
              "OS-DCF:diskConfig": "AUTO" if inst.auto_disk_config else "MANUAL"}
    # As nova's view of a create: the groups as the request named them (an id stays an
    # id), "default" when it named none.
    server["security_groups"] = s.get("security_groups", [{"name": "default"}])
    server["adminPass"] = admin_pass
    return respond(req, {"server": server}, 202,
                   headers={"Location": links(req, "servers", inst.uuid)[0]["href"]})


# --- list -----------------------------------------------------------------------------

SORT_KEYS = {"created_at": Instance.created_at, "updated_at": Instance.updated_at,
             "display_name": Instance.display_name, "uuid": Instance.uuid,
             "vm_state": Instance.vm_state, "task_state": Instance.task_state,
             "power_state": Instance.power_state, "host": Instance.host,
             "node": Instance.node, "image_ref": Instance.image_ref,
             "launched_at": Instance.launched_at, "terminated_at": Instance.terminated_at,
             "availability_zone": Instance.availability_zone, "key_name": Instance.key_name,
             "project_id": Instance.project_id, "user_id": Instance.user_id,
             "hostname": Instance.hostname, "locked": Instance.locked_by,
             "display_description": Instance.display_description,
             "instance_type_id": Instance.memory_mb, "launch_index": Instance.launch_index,
             "root_device_name": Instance.root_device_name, "config_drive": Instance.config_drive,
             "kernel_id": Instance.uuid, "ramdisk_id": Instance.uuid,
             "access_ip_v4": Instance.access_ip_v4, "access_ip_v6": Instance.access_ip_v6,
             "auto_disk_config": Instance.auto_disk_config, "progress": Instance.progress,
             "reservation_id": Instance.reservation_id}


def _tags_filter(stmt, q):
    def split(name):
        return [t for t in (q.get(name) or "").split(",") if t]

    for tag in split("tags"):
        stmt = stmt.where(Instance.uuid.in_(sa.select(InstanceTag.instance_uuid)
                                            .where(InstanceTag.tag == tag)))
    if split("tags-any"):
        stmt = stmt.where(Instance.uuid.in_(sa.select(InstanceTag.instance_uuid)
                                            .where(InstanceTag.tag.in_(split("tags-any")))))
    if split("not-tags"):
        tags = split("not-tags")
        having_all = (sa.select(InstanceTag.instance_uuid).where(InstanceTag.tag.in_(tags))
                      .group_by(InstanceTag.instance_uuid)
                      .having(sa.func.count() == len(set(tags))))
        stmt = stmt.where(Instance.uuid.not_in(having_all))
    if split("not-tags-any"):
        stmt = stmt.where(Instance.uuid.not_in(sa.select(InstanceTag.instance_uuid)
                                               .where(InstanceTag.tag.in_(split("not-tags-any")))))
    return stmt


def _list(req, detail: bool):
    ctx = req.context
    q = req.query
    authorize(req, "os_compute_api:servers:detail" if detail else "os_compute_api:servers:index")
    # Columns, not ORM objects: a detail list of 1,000 servers builds no Instance.
    stmt = sa.select(*views.list_columns(req, detail))
    # nova's common.is_all_tenants: present and empty, or true as oslo reads it
    all_tenants = "all_tenants" in q
    if q.get("all_tenants"):
        try:
            all_tenants = bool_from_string(q["all_tenants"], strict=True)
        except ValueError as error:
            raise exceptions.BadRequest(f"Invalid input received: {error}") from None
    if all_tenants:
        authorize(req, "os_compute_api:servers:detail:get_all_tenants" if detail
                  else "os_compute_api:servers:index:get_all_tenants")
    admin = policy.check(ctx, "os_compute_api:servers:allow_all_filters")
    project = q.get("project_id") or q.get("tenant_id")
    if all_tenants and admin:
        if project:
            stmt = stmt.where(Instance.project_id == project)
    elif admin and project:
        stmt = stmt.where(Instance.project_id == project)
    else:
        stmt = stmt.where(Instance.project_id == ctx.project_id)
    deleted = admin and bool_from_string(q.get("deleted", "false"))
    since, before = changes_window(q, at_least(req, "2.66"))
    if since is not None:
        stmt = stmt.where(Instance.updated_at >= since)
    if before is not None:
        # Times are shown to the second: a server updated within the second that
        # changes-before names is at the boundary, and included as nova includes it.
        if before.microsecond == 0:
            stmt = stmt.where(Instance.updated_at < before + dt.timedelta(seconds=1))
        else:
            stmt = stmt.where(Instance.updated_at <= before)
    if deleted:
        stmt = stmt.where(Instance.deleted.is_(True))
    elif since is None and before is None:  # both ask for deleted servers too, as nova
        stmt = stmt.where(Instance.deleted.is_(False))
    statuses = q.getlist("status")
    if statuses:
        vms: set = set()
        tasks: set = set()
        any_task = False
        for st in statuses:
            found = states.states_for_status(st)
            if found is None:
                if at_least(req, "2.38"):
                    raise exceptions.BadRequest(f"Invalid status value: {st}")
                return respond(req, {"servers": []})
            vms |= found[0]
            if st.upper() in ("ACTIVE", "SHUTOFF", "PAUSED", "SUSPENDED", "ERROR", "BUILD",
                              "DELETED", "SOFT_DELETED", "SHELVED", "SHELVED_OFFLOADED",
                              "RESCUE"):
                any_task = True
            tasks |= found[1]
        stmt = stmt.where(Instance.vm_state.in_(vms))
        if not any_task:
            stmt = stmt.where(Instance.task_state.in_([t for t in tasks if t]))
        if "DELETED" in [s.upper() for s in statuses] and not deleted:
            stmt = stmt.where(sa.true())
    for key, col in (("image", Instance.image_ref), ("reservation_id", Instance.reservation_id),
                     ("availability_zone", Instance.availability_zone),
                     ("key_name", Instance.key_name), ("user_id", Instance.user_id)):
        if q.get(key):
            value = _ref(q[key]) if key == "image" else q[key]
            if key in ("availability_zone", "key_name", "user_id") and not admin and \
                    not at_least(req, "2.83"):
                continue
            stmt = stmt.where(col == value)
    if admin or at_least(req, "2.83"):
        # 2.83 lets everyone filter on these (admins always could). As nova's database
        # API: the states match exactly (several values are any of them), the other
        # columns as a substring of their text, as nova's LIKE '%value%'.
        for key, col in (("vm_state", Instance.vm_state), ("task_state", Instance.task_state)):
            values = [v for v in q.getlist(key) if v]
            if values:
                stmt = stmt.where(col.in_(values))
        for key, col in (("config_drive", Instance.config_drive),
                         ("power_state", Instance.power_state),
                         ("progress", Instance.progress),
                         ("created_at", Instance.created_at),
                         ("launched_at", Instance.launched_at),
                         ("terminated_at", Instance.terminated_at)):
            if q.get(key):
                stmt = stmt.where(sa.cast(col, sa.String).like(f"%{q[key]}%"))
    if q.get("flavor"):
        flavor = q["flavor"]
        stmt = stmt.where(Instance.flavor["flavorid"].as_string() == flavor)
    if admin:
        for key, col in (("host", Instance.host), ("node", Instance.node)):
            if q.get(key):
                stmt = stmt.where(col == q[key])
    if q.get("hostname") and (admin or at_least(req, "2.90")):  # everyone's from 2.90
        stmt = stmt.where(Instance.hostname == q["hostname"])
    if at_least(req, "2.26"):
        stmt = _tags_filter(stmt, q)
    if at_least(req, "2.73") and q.get("locked") is not None:
        try:  # nova's common.is_locked
            locked = bool_from_string(q["locked"], strict=True)
        except ValueError as error:
            raise exceptions.BadRequest(f"Invalid input received: {error}") from None
        stmt = stmt.where(Instance.locked_by.is_not(None) if locked
                          else Instance.locked_by.is_(None))
    # sorting
    keys = q.getlist("sort_key") or ["created_at"]
    dirs = q.getlist("sort_dir")
    order = []
    for i, key in enumerate(keys):
        if key not in SORT_KEYS:
            raise exceptions.BadRequest(f"Invalid sort_key {key}")
        direction = dirs[i] if i < len(dirs) else (dirs[0] if dirs else "desc")
        if direction not in ("asc", "desc"):
            raise exceptions.BadRequest(f"Invalid sort_dir {direction}")
        col = SORT_KEYS[key]
        order.append(col.desc() if direction == "desc" else col.asc())
    order.append(Instance.uuid.desc())
    stmt = stmt.order_by(*order)
    limit, marker = limit_marker(req)
    name_re = _regex(q.get("name")) if q.get("name") else None
    ip_re = _regex(q.get("ip")) if q.get("ip") else None
    ip6_re = _regex(q.get("ip6")) if q.get("ip6") and (admin or at_least(req, "2.5")) else None
    # Without the regex filters (applied in Python) the page is cut in SQL: the marker's
    # place found from the ids alone, then only the page's rows read and rendered.
    paged_in_sql = not (name_re or ip_re or ip6_re)
    all_ids = stmt.with_only_columns(Instance.uuid).order_by(None)
    with db.reader() as s:
        if paged_in_sql:
            if marker:
                ids = s.connection().execute(stmt.with_only_columns(Instance.uuid)).scalars()
                place = next((i for i, uuid in enumerate(ids) if uuid == marker), None)
                if place is None:
                    raise exceptions.BadRequest(f"marker [{marker}] not found")
                stmt = stmt.offset(place + 1)
            stmt = stmt.limit(limit)
        result = s.connection().execute(stmt)
        rows = list(map(views.ServerRow._make, result)) if detail else result.all()
    if not paged_in_sql:
        rows = [r for r in rows if _matches(r, name_re, ip_re, ip6_re)]
        if marker:
            ids = [r.uuid for r in rows]
            if marker not in ids:
                raise exceptions.BadRequest(f"marker [{marker}] not found")
            rows = rows[ids.index(marker) + 1:]
        rows = rows[:limit]
    if detail:
        # A long page filters the bulk loads by a sub-select rather than a long IN list.
        vc = views.ViewContext(req, rows, uuids=None if paged_in_sql else all_ids,
                               groups=False)
        items = [views.server(req, r, vc) for r in rows]
    else:
        items = [views.basic(req, r) for r in rows]
    out = {"servers": items}
    nl = next_link(req, "servers/detail" if detail else "servers", items, limit)
    if nl and q.get("limit"):
        out["servers_links"] = nl
    return respond(req, out)


def _regex(text: str):
    try:
        return re.compile(text)
    except re.error:
        return re.compile(re.escape(text))


def _matches(r, name_re, ip_re, ip6_re) -> bool:
    if name_re and not name_re.search(r.display_name or ""):
        return False
    ips = [(ip["version"], ip["ip_address"]) for vif in r.network_info or []
           for ip in vif.get("fixed_ips", [])]
    if ip_re and not any(v == 4 and ip_re.search(a) for v, a in ips):
        return False
    if ip6_re and not any(v == 6 and ip6_re.search(a) for v, a in ips):
        return False
    return True


def list_servers(req):
    return _list(req, False)


def list_servers_detail(req):
    return _list(req, True)


def show_server(req):
    authorize(req, "os_compute_api:servers:show")
    inst = instances.get(req.context, req.params["server_id"])
    return respond(req, {"server": views.server(req, inst, show_groups=True)})


def update_server(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:servers:update", {"project_id": inst.project_id})
    data = body(req, server_schemas.update_schema(version(req)))["server"]
    values = {}
    if "name" in data:
        values["display_name"] = data["name"]
    if "description" in data:
        values["display_description"] = data["description"]
    if "accessIPv4" in data:
        values["access_ip_v4"] = data["accessIPv4"]
    if "accessIPv6" in data:
        values["access_ip_v6"] = canonical_ipv6(data["accessIPv6"])
    if "OS-DCF:diskConfig" in data:
        values["auto_disk_config"] = data["OS-DCF:diskConfig"] == "AUTO"
    if "hostname" in data:  # 2.90
        values["hostname"] = data["hostname"]
    if values and not instances.update(inst.uuid, values):
        raise instances.not_found(inst.uuid)
    inst = instances.get(req.context, inst.uuid)
    return respond(req, {"server": views.after_change(req, inst)})


def delete_server(req):
    inst = instances.get(req.context, req.params["server_id"])
    authorize(req, "os_compute_api:servers:delete", {"project_id": inst.project_id})
    actions.delete(req.context, inst)
    return respond(req, None, 204)


