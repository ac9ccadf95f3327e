"""``trunk_details`` on a port that is a trunk's parent (neutron's trunk-details
extension): the trunk's id and its subports with their MAC addresses, which nova reads to
plug a trunk. Other ports have no such key, as in neutron."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.network.models import Port, SubPort, Trunk


def attach(s, ports: list) -> None:
    """Set ``trunk_details`` on those of ``ports`` that are parents (one query for the
    trunks, one for their subports)."""
    by_port = dict(s.execute(sa.select(Trunk.port_id, Trunk.id).where(
        Trunk.port_id.in_([p.id for p in ports]))).all()) if ports else {}
    subports: dict[str, list[dict]] = {trunk_id: [] for trunk_id in by_port.values()}
    if subports:
        rows = s.execute(sa.select(SubPort.trunk_id, SubPort.port_id,
                                   SubPort.segmentation_type, SubPort.segmentation_id,
                                   Port.mac_address)
                         .join(Port, Port.id == SubPort.port_id)
                         .where(SubPort.trunk_id.in_(list(subports)))
                         .order_by(SubPort.segmentation_id))
        for trunk_id, port_id, seg_type, seg_id, mac in rows:
            subports[trunk_id].append({"segmentation_id": seg_id,
                                       "segmentation_type": seg_type, "port_id": port_id,
                                       "mac_address": mac})
    for port in ports:
        trunk_id = by_port.get(port.id)
        port.trunk_details = ({"trunk_id": trunk_id, "sub_ports": subports[trunk_id]}
                              if trunk_id else None)
