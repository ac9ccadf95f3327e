"""The network topology picture's layout. Networks are vertical bars in columns, external
networks first, then each router's networks side by side; every router or server is a box
in the lane right of the leftmost network it is on, so a router stands between the
networks it joins. Each box has its own row, so a link is one horizontal line at the box's
height, with the port's addresses at the joint; a link that must pass another network goes
under that network's bar (drawn over it) and has no joint there. Floating IPs are joints
on their external network, on their server's row; volumes are listed in their server's box.
templates/topology.html turns it into SVG (server-side, no script, text labels and a
title/desc for screen readers).

No label crosses a network bar: a joint's text sits in the label space beside the bar, cut
to that width (the whole address is in its tooltip), and the network names above the bars
are cut to the narrower of the lanes beside them. A column with no box in it is narrow, and
the page scales the picture down to its frame, so every network drawn is in view.

Only what the API lists is drawn: the first MAX_NETWORKS networks, MAX_DEVICES routers and
servers; the desc says how many were left out.
"""
from __future__ import annotations

MAX_NETWORKS = 12
MAX_DEVICES = 60
MAX_PORTS = 500

TOP = 84  # y of the first box: the network names and CIDRs sit above it
BOX_W, BOX_H = 150, 36
ROW_GAP = 20  # between one box and the next row's
VOLUME_LINE = 15  # each attached volume adds a line to its server's box
BAR_W = 10
LABEL_W = 140  # the room for a joint's addresses between a bar and a box
LANE = BAR_W + LABEL_W + BOX_W + LABEL_W  # one network's column: bar, label, box, label
EMPTY_LANE = BAR_W + LABEL_W + 20  # a column with no box: room for a joint's label only
CHAR_W = 6.6  # an 11px label's widest characters, for cutting labels to their room
NAME_CHAR_W = 8.0  # the same for a 13px network name
LEFT = 20  # x of the first bar when no box stands left of every network
COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#d62728", "#8c564b", "#e377c2", "#17becf",
           "#bcbd22", "#ff7f0e", "#7f7f7f")


def _short(text: str, size: int = 20) -> str:
    return text if len(text) <= size else text[:size - 1] + "…"


def _fit(text: str, width: float) -> str:
    return _short(text, max(4, int(width / CHAR_W)))


def _ips(port: dict) -> list[str]:
    return [ip.get("ip_address", "") for ip in port.get("fixed_ips") or []]


def _column_order(networks: list, routers: list, ports: list) -> list[dict]:
    """External networks first, then the networks of each router together (so a router
    has its networks side by side), then the rest in the API's order."""
    by_id = {n["id"]: n for n in networks}
    order: list[str] = [n["id"] for n in networks if n.get("router:external")]
    joined: dict[str, list[str]] = {}
    for r in routers:
        gateway = (r.get("external_gateway_info") or {}).get("network_id")
        if gateway:
            joined.setdefault(r["id"], []).append(gateway)
    for p in ports:
        if (p.get("device_owner") or "").startswith("network:router_interface"):
            joined.setdefault(p["device_id"], []).append(p.get("network_id"))
    for router_id in sorted(joined):
        for net in joined[router_id]:
            if net in by_id and net not in order:
                order.append(net)
    order += [n["id"] for n in networks if n["id"] not in order]
    return [by_id[i] for i in order]


def draw(networks: list, routers: list, ports: list, servers: list,
         subnets: list = (), floating_ips: list = (), volumes: list = ()) -> dict:
    cidrs: dict[str, list[str]] = {}
    for s in subnets:
        cidrs.setdefault(s.get("network_id"), []).append(s.get("cidr", ""))
    columns = _column_order(networks[:MAX_NETWORKS], routers, ports)
    nets = {}
    for i, n in enumerate(columns):
        name = n.get("name") or n["id"]
        external = bool(n.get("router:external"))
        nets[n["id"]] = {"id": n["id"], "name": name, "column": i, "external": external,
                         "cidrs": ", ".join(cidrs.get(n["id"], [])),
                         "colour": COLOURS[i % len(COLOURS)]}
    names = {s["id"]: s.get("name") or s["id"] for s in servers}
    devices: dict[str, dict] = {}

    def device(device_id: str, kind: str, name: str) -> dict:
        if device_id not in devices:
            devices[device_id] = {"id": device_id, "kind": kind, "name": name,
                                  "label": _fit(name, BOX_W - 30), "links": [],
                                  "volumes": [], "floating": []}
        return devices[device_id]

    for r in routers:
        d = device(r["id"], "router", r.get("name") or r["id"])
        gateway = r.get("external_gateway_info") or {}
        if gateway.get("network_id") in nets:
            d["links"].append({"network": gateway["network_id"], "port": "gateway",
                               "ips": [ip.get("ip_address", "") for ip in
                                       gateway.get("external_fixed_ips") or []]})
    for p in ports:
        owner = p.get("device_owner") or ""
        if owner.startswith("network:router_interface"):
            d = device(p["device_id"], "router", p["device_id"])
        elif owner.startswith("compute:"):
            d = device(p["device_id"], "server", names.get(p["device_id"], p["device_id"]))
        else:
            continue  # DHCP and unbound ports are the network's own business
        if p.get("network_id") in nets:
            d["links"].append({"network": p["network_id"], "ips": _ips(p), "port": p["id"]})
    for v in volumes:
        for a in v.get("attachments") or []:
            server = devices.get(a.get("server_id"))
            if server is not None and server["kind"] == "server":
                server["volumes"].append(_fit(v.get("name") or v["id"], BOX_W - 30))
    port_device = {p["id"]: p["device_id"] for p in ports}
    for f in floating_ips:
        owner = devices.get(port_device.get(f.get("port_id")))
        if owner is not None and f.get("floating_network_id") in nets:
            owner["floating"].append({"network": f["floating_network_id"],
                                      "ip": f.get("floating_ip_address", "")})

    for d in devices.values():
        d["column"] = min((nets[link["network"]]["column"] for link in d["links"]),
                          default=-1)  # -1: on no drawn network, left of every bar
    ordered = sorted(devices.values(), key=lambda d: (d["column"], d["kind"] != "router",
                                                      d["name"]))
    shown, hidden = ordered[:MAX_DEVICES], len(ordered) - MAX_DEVICES
    busy = {d["column"] for d in shown}
    lanes = [LANE if i in busy else EMPTY_LANE for i in range(len(columns))]
    for n in nets.values():  # the name and CIDRs fit the narrower lane beside the bar
        i = n["column"]
        room = min(lanes[i - 1] if i else LANE, lanes[i] if i < len(lanes) - 1 else LANE) - 20
        n["label"] = _short(n["name"] + (" (ext)" if n["external"] else ""),
                            int(room / NAME_CHAR_W))
        n["cidr_label"] = _fit(n["cidrs"], room)
    x0 = LEFT + (BOX_W + 20 if any(d["column"] < 0 for d in shown) else 0)
    if columns:  # the first network's name and CIDRs, centred on its bar, stay in view
        first = nets[columns[0]["id"]]
        x0 = max(x0, int(max(len(first["label"]) * NAME_CHAR_W,
                             len(first["cidr_label"]) * CHAR_W) / 2) + 4)
    for n in nets.values():
        n["x"] = x0 + sum(lanes[:n["column"]])
    y = TOP
    for d in shown:
        _place(d, y, nets)
        y += d["height"] + ROW_GAP
    height = max(y, TOP + BOX_H + ROW_GAP) + 10
    width = max(x0 + sum(lanes), 420)
    return {"networks": list(nets.values()), "devices": shown, "width": width,
            "height": height, "summary": _summary(nets, shown, hidden,
                                                  len(networks) - len(nets))}


def _place(d: dict, y: int, nets: dict) -> None:
    """The box's place in its lane, and each link's line, joint and label beside it."""
    d["y"] = y
    bar_x = {n["column"]: n["x"] for n in nets.values()}
    d["x"] = LEFT if d["column"] < 0 else bar_x[d["column"]] + BAR_W + LABEL_W
    d["height"] = BOX_H + VOLUME_LINE * len(d["volumes"])
    d["mid"] = y + BOX_H // 2
    for link in d["links"]:
        net = nets[link["network"]]
        link["colour"], link["network_name"] = net["colour"], net["name"]
        link["joint"] = net["x"] + BAR_W // 2
        left_of_box = net["x"] < d["x"]
        # The label sits in the room between the bar and the box (or, for a network to the
        # right, the room just left of that network's bar), never over a bar.
        link["label_x"] = net["x"] + BAR_W + 4 if left_of_box else net["x"] - 4
        link["anchor"] = "start" if left_of_box else "end"
        link["line_x"] = d["x"] if left_of_box else d["x"] + BOX_W
        link["labels"] = [_fit(ip, LABEL_W - 8) for ip in link["ips"][:2]]
        if len(link["ips"]) > 2:
            link["labels"][-1] = _fit(f"{link['ips'][1]} +{len(link['ips']) - 2}",
                                      LABEL_W - 8)
    for f in d["floating"]:
        net = nets[f["network"]]
        f["joint"] = net["x"] + BAR_W // 2
        f["colour"] = net["colour"]
        f["label_x"], f["anchor"] = net["x"] + BAR_W + 4, "start"
        if net["x"] > d["x"]:  # an external network right of the box
            f["label_x"], f["anchor"] = net["x"] - 4, "end"
        f["label"] = _fit(f"{f['ip']} floating", LABEL_W - 8)
        f["line_x"] = d["x"] if net["x"] < d["x"] else d["x"] + BOX_W


def _summary(nets: dict, devices: list, hidden: int, hidden_networks: int) -> str:
    parts = [f"{len(nets)} networks, {sum(d['kind'] == 'router' for d in devices)} routers "
             f"and {sum(d['kind'] == 'server' for d in devices)} servers."]
    if nets:
        parts.append("Networks: " + "; ".join(
            f"{n['name']} ({n['cidrs'] or 'no subnet'}{', external' if n['external'] else ''})"
            for n in nets.values()) + ".")
    for d in devices:
        links = "; ".join(f"{nets[link['network']]['name']} "
                          f"({', '.join(link['ips']) or 'no address'})"
                          for link in d["links"])
        text = (f"{d['kind'].capitalize()} {d['name']}: "
                f"{'on ' + links if links else 'on no network'}")
        if d["floating"]:
            text += "; floating IP " + ", ".join(
                f"{f['ip']} on {nets[f['network']]['name']}" for f in d["floating"])
        if d["volumes"]:
            text += "; volumes " + ", ".join(d["volumes"])
        parts.append(text + ".")
    if hidden > 0:
        parts.append(f"{hidden} more routers or servers are not drawn.")
    if hidden_networks > 0:
        parts.append(f"{hidden_networks} more networks are not drawn.")
    return " ".join(parts)
