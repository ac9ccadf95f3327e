"""The network topology picture's layout: networks as vertical bars, routers and servers as
boxes in a column on the left, one line from a box to each network it has a port on, with
the port's address at the joint. templates/topology.html turns it into SVG (server-side,
no script, text labels and a title/desc for screen readers).

Only what the API lists is drawn: the first MAX_NETWORKS networks, MAX_DEVICES routers and
servers; the desc says how many were left out.
"""
from __future__ import annotations

MAX_NETWORKS = 12
MAX_DEVICES = 60
MAX_PORTS = 500

TOP = 84  # y of the first box: the network names and CIDRs sit above it
ROW = 56  # one box per row
BOX_W, BOX_H = 180, 36
NET_X0, NET_GAP = 250, 150
COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#d62728", "#8c564b", "#e377c2", "#17becf",
           "#bcbd22", "#ff7f0e", "#7f7f7f")


def _short(text: str, size: int = 20) -> str:
    return text if len(text) <= size else text[:size - 1] + "…"


def _ips(port: dict) -> str:
    return ", ".join(ip.get("ip_address", "") for ip in port.get("fixed_ips") or [])


def draw(networks: list, routers: list, ports: list, servers: list,
         subnets: list = ()) -> dict:
    cidrs: dict[str, list[str]] = {}
    for s in subnets:
        cidrs.setdefault(s.get("network_id"), []).append(s.get("cidr", ""))
    nets = {}
    for i, n in enumerate(networks[:MAX_NETWORKS]):
        nets[n["id"]] = {"id": n["id"], "name": n.get("name") or n["id"],
                         "label": _short(n.get("name") or n["id"][:8]),
                         "cidrs": ", ".join(cidrs.get(n["id"], [])),
                         "external": bool(n.get("router:external")),
                         "x": NET_X0 + i * NET_GAP, "colour": COLOURS[i % len(COLOURS)]}
    names = {s["id"]: s.get("name") or s["id"] for s in servers}
    devices: dict[str, dict] = {}

    def device(device_id: str, kind: str, name: str) -> dict:
        if device_id not in devices:
            devices[device_id] = {"id": device_id, "kind": kind, "name": name,
                                  "label": _short(name), "links": []}
        return devices[device_id]

    for r in routers:
        d = device(r["id"], "router", r.get("name") or r["id"])
        gateway = r.get("external_gateway_info") or {}
        if gateway.get("network_id") in nets:
            ips = ", ".join(ip.get("ip_address", "")
                            for ip in gateway.get("external_fixed_ips") or [])
            d["links"].append({"network": gateway["network_id"], "ip": ips,
                               "port": "gateway"})
    for p in ports:
        owner = p.get("device_owner") or ""
        if owner.startswith("network:router_interface"):
            d = device(p["device_id"], "router", p["device_id"])
        elif owner.startswith("compute:"):
            d = device(p["device_id"], "server", names.get(p["device_id"], p["device_id"]))
        else:
            continue  # DHCP and unbound ports are the network's own business
        if p.get("network_id") in nets:
            d["links"].append({"network": p["network_id"], "ip": _ips(p), "port": p["id"]})
    ordered = sorted(devices.values(), key=lambda d: (d["kind"] != "router", d["name"]))
    shown, hidden = ordered[:MAX_DEVICES], len(ordered) - MAX_DEVICES
    for row, d in enumerate(shown):
        d["y"] = TOP + row * ROW
        for link in d["links"]:
            link["x"] = nets[link["network"]]["x"] + 5
            link["colour"] = nets[link["network"]]["colour"]
            link["network_name"] = nets[link["network"]]["name"]
    height = TOP + max(len(shown), 1) * ROW + 10
    width = max(NET_X0 + len(nets) * NET_GAP, 420)
    return {"networks": list(nets.values()), "devices": shown, "width": width,
            "height": height, "summary": _summary(nets, shown, hidden,
                                                  len(networks) - len(nets))}


def _summary(nets: dict, devices: list, hidden: int, hidden_networks: int) -> str:
    parts = [f"{len(nets)} networks, {sum(d['kind'] == 'router' for d in devices)} routers "
             f"and {sum(d['kind'] == 'server' for d in devices)} servers."]
    if nets:
        parts.append("Networks: " + "; ".join(
            f"{n['name']} ({n['cidrs'] or 'no subnet'})" for n in nets.values()) + ".")
    for d in devices:
        links = "; ".join(f"{nets[link['network']]['name']} ({link['ip'] or 'no address'})"
                          for link in d["links"])
        parts.append(f"{d['kind'].capitalize()} {d['name']}: "
                     f"{'on ' + links if links else 'on no network'}.")
    if hidden > 0:
        parts.append(f"{hidden} more routers or servers are not drawn.")
    if hidden_networks > 0:
        parts.append(f"{hidden_networks} more networks are not drawn.")
    return " ".join(parts)
