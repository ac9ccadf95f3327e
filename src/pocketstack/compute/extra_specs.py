"""Flavor extra spec validation (compute 2.86): nova's registry of known extra specs
(nova/api/validation/extra_specs at openstack/nova 00a0304, names and value rules only).
A name a rule knows must have a valid value; an unknown name in a namespace nova knows
(``hw:``, ``quota:``, ``resources1:`` …) is refused; anything else passes. Nova checks
``resources`` and ``trait`` names against os-resource-classes and os-traits; those lists
are not installed here, so any upper-case name is taken for them."""
from __future__ import annotations

import functools
import re

from pocketstack.common import exceptions

# (name with {parameters}, value rule, [(parameter, pattern)])
_RULES = \
[('accel:device_profile', {'type': 'str'}, []),
 ('aggregate_instance_extra_specs:{key}', {'type': 'str'}, [('key', '.+')]),
 ('capabilities:id', {'type': 'str'}, []),
 ('capabilities:uuid', {'type': 'str'}, []),
 ('capabilities:service_id', {'type': 'str'}, []),
 ('capabilities:host', {'type': 'str'}, []),
 ('capabilities:vcpus', {'type': 'str'}, []),
 ('capabilities:memory_mb', {'type': 'str'}, []),
 ('capabilities:local_gb', {'type': 'str'}, []),
 ('capabilities:vcpus_used', {'type': 'str'}, []),
 ('capabilities:memory_mb_used', {'type': 'str'}, []),
 ('capabilities:local_gb_used', {'type': 'str'}, []),
 ('capabilities:hypervisor_type', {'type': 'str'}, []),
 ('capabilities:hypervisor_version', {'type': 'str'}, []),
 ('capabilities:hypervisor_hostname', {'type': 'str'}, []),
 ('capabilities:free_ram_mb', {'type': 'str'}, []),
 ('capabilities:free_disk_gb', {'type': 'str'}, []),
 ('capabilities:current_workload', {'type': 'str'}, []),
 ('capabilities:running_vms', {'type': 'str'}, []),
 ('capabilities:disk_available_least', {'type': 'str'}, []),
 ('capabilities:host_ip', {'type': 'str'}, []),
 ('capabilities:mapped', {'type': 'str'}, []),
 ('capabilities:cpu_allocation_ratio', {'type': 'str'}, []),
 ('capabilities:ram_allocation_ratio', {'type': 'str'}, []),
 ('capabilities:disk_allocation_ratio', {'type': 'str'}, []),
 ('capabilities:total_usable_ram_mb', {'type': 'str'}, []),
 ('capabilities:total_usable_disk_gb', {'type': 'str'}, []),
 ('capabilities:disk_mb_used', {'type': 'str'}, []),
 ('capabilities:free_disk_mb', {'type': 'str'}, []),
 ('capabilities:vcpus_total', {'type': 'str'}, []),
 ('capabilities:vcpus_used', {'type': 'str'}, []),
 ('capabilities:num_instances', {'type': 'str'}, []),
 ('capabilities:num_io_ops', {'type': 'str'}, []),
 ('capabilities:failed_builds', {'type': 'str'}, []),
 ('capabilities:aggregates', {'type': 'str'}, []),
 ('capabilities:cell_uuid', {'type': 'str'}, []),
 ('capabilities:updated', {'type': 'str'}, []),
 ('capabilities:cpu_info{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:metrics{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:stats{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:numa_topology{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:supported_hv_specs{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:pci_device_pools{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:nodename{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:pci_stats{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:supported_instances{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:limits{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('capabilities:instances{filter}', {'type': 'str'}, [('filter', '(:\\w+)*')]),
 ('hw:cpu_realtime', {'type': 'bool'}, []),
 ('hw:cpu_realtime_mask',
  {'pattern': '(\\^)?\\d+((-\\d+)?(,\\^?\\d+(-\\d+)?)?)*', 'type': 'str'},
  []),
 ('hw:hide_hypervisor_id', {'type': 'bool'}, []),
 ('hw:cpu_policy', {'enum': ['dedicated', 'shared', 'mixed'], 'type': 'str'}, []),
 ('hw:cpu_thread_policy', {'enum': ['prefer', 'isolate', 'require'], 'type': 'str'}, []),
 ('hw:emulator_threads_policy', {'enum': ['isolate', 'share'], 'type': 'str'}, []),
 ('hw:cpu_dedicated_mask',
  {'pattern': '\\^?\\d+((-\\d+)?(,\\^?\\d+(-\\d+)?)?)*', 'type': 'str'},
  []),
 ('hw:mem_page_size',
  {'pattern': '(large|small|any|\\d+([kKMGT]i?)?(b|bit|B)?)', 'type': 'str'},
  []),
 ('hw:locked_memory', {'type': 'bool'}, []),
 ('hw:numa_nodes', {'min': 1, 'type': 'int'}, []),
 ('hw:numa_cpus.{num}',
  {'pattern': '\\^?\\d+((-\\d+)?(,\\^?\\d+(-\\d+)?)?)*', 'type': 'str'},
  [('num', '\\d+')]),
 ('hw:numa_mem.{num}', {'min': 1, 'type': 'int'}, [('num', '\\d+')]),
 ('hw:pci_numa_affinity_policy',
  {'enum': ['required', 'preferred', 'legacy', 'socket'], 'type': 'str'},
  []),
 ('hw:cpu_sockets', {'min': 1, 'type': 'int'}, []),
 ('hw:cpu_cores', {'min': 1, 'type': 'int'}, []),
 ('hw:cpu_threads', {'min': 1, 'type': 'int'}, []),
 ('hw:cpu_max_sockets', {'min': 1, 'type': 'int'}, []),
 ('hw:cpu_max_cores', {'min': 1, 'type': 'int'}, []),
 ('hw:cpu_max_threads', {'min': 1, 'type': 'int'}, []),
 ('hw:boot_menu', {'type': 'bool'}, []),
 ('hw:vif_multiqueue_enabled', {'type': 'bool'}, []),
 ('hw:mem_encryption', {'type': 'bool'}, []),
 ('hw:mem_encryption_model',
  {'enum': ['amd-sev', 'amd-sev-es', 'amd-sev-snp'], 'type': 'str'},
  []),
 ('hw:pmem', {'pattern': '([a-zA-Z0-9_]+(,)?)+', 'type': 'str'}, []),
 ('hw:pmu', {'type': 'bool'}, []),
 ('hw:serial_port_count', {'min': 0, 'type': 'int'}, []),
 ('hw:tpm_model', {'enum': ['tpm-tis', 'tpm-crb'], 'type': 'str'}, []),
 ('hw:tpm_version', {'enum': ['1.2', '2.0'], 'type': 'str'}, []),
 ('hw:tpm_secret_security', {'enum': ['user', 'host', 'deployment'], 'type': 'str'}, []),
 ('hw:watchdog_action',
  {'enum': ['none', 'pause', 'poweroff', 'reset', 'disabled'], 'type': 'str'},
  []),
 ('hw:viommu_model', {'enum': ['intel', 'smmuv3', 'virtio', 'auto'], 'type': 'str'}, []),
 ('hw:virtio_packed_ring', {'type': 'bool'}, []),
 ('hw:sound_model',
  {'enum': ['sb16', 'es1370', 'pcspk', 'ac97', 'ich6', 'ich9', 'usb', 'virtio'], 'type': 'str'},
  []),
 ('hw:usb_model', {'enum': ['none', 'nec-xhci', 'qemu-xhci'], 'type': 'str'}, []),
 ('hw:redirected_usb_ports', {'max': 15, 'min': 0, 'type': 'int'}, []),
 ('hw:ephemeral_encryption', {'type': 'bool'}, []),
 ('hw:ephemeral_encryption_format', {'enum': ['plain', 'luks', 'luksv2'], 'type': 'str'}, []),
 ('hw_rng:allowed', {'type': 'bool'}, []),
 ('hw_rng:rate_bytes', {'min': 0, 'type': 'int'}, []),
 ('hw_rng:rate_period', {'min': 0, 'type': 'int'}, []),
 ('hw_video:ram_max_mb', {'min': 0, 'type': 'int'}, []),
 ('hide_hypervisor_id', {'type': 'bool'}, []),
 ('group_policy', {'enum': ['isolate', 'none'], 'type': 'str'}, []),
 ('os:secure_boot', {'enum': ['disabled', 'required'], 'type': 'str'}, []),
 ('pci_passthrough:alias',
  {'pattern': '[^:]+:\\d+(?:\\s*,\\s*[^:]+:\\d+)*', 'type': 'str'},
  []),
 ('quota:cpu_limit', {'min': 0, 'type': 'int'}, []),
 ('quota:cpu_reservation', {'type': 'int'}, []),
 ('quota:cpu_shares_level', {'enum': ['custom', 'high', 'normal', 'low'], 'type': 'str'}, []),
 ('quota:cpu_shares_share', {'min': 0, 'type': 'int'}, []),
 ('quota:memory_limit', {'min': 0, 'type': 'int'}, []),
 ('quota:memory_reservation', {'type': 'int'}, []),
 ('quota:memory_shares_level',
  {'enum': ['custom', 'high', 'normal', 'low'], 'type': 'str'},
  []),
 ('quota:memory_shares_share', {'min': 0, 'type': 'int'}, []),
 ('quota:disk_io_limit', {'min': 0, 'type': 'int'}, []),
 ('quota:disk_io_reservation', {'type': 'int'}, []),
 ('quota:disk_io_shares_level',
  {'enum': ['custom', 'high', 'normal', 'low'], 'type': 'str'},
  []),
 ('quota:disk_io_shares_share', {'min': 0, 'type': 'int'}, []),
 ('quota:vif_limit', {'min': 0, 'type': 'int'}, []),
 ('quota:vif_reservation', {'type': 'int'}, []),
 ('quota:vif_shares_level', {'enum': ['custom', 'high', 'normal', 'low'], 'type': 'str'}, []),
 ('quota:vif_shares_share', {'min': 0, 'type': 'int'}, []),
 ('quota:cpu_shares', {'min': 0, 'type': 'int'}, []),
 ('quota:cpu_period', {'min': 0, 'type': 'int'}, []),
 ('quota:cpu_quota', {'type': 'int'}, []),
 ('quota:disk_read_bytes_sec', {'min': 0, 'type': 'int'}, []),
 ('quota:disk_read_iops_sec', {'min': 0, 'type': 'int'}, []),
 ('quota:disk_write_bytes_sec', {'min': 0, 'type': 'int'}, []),
 ('quota:disk_write_iops_sec', {'min': 0, 'type': 'int'}, []),
 ('quota:disk_total_bytes_sec', {'min': 0, 'type': 'int'}, []),
 ('quota:disk_total_iops_sec', {'min': 0, 'type': 'int'}, []),
 ('quota:vif_inbound_average', {'min': 0, 'type': 'int'}, []),
 ('quota:vif_inbound_peak', {'min': 0, 'type': 'int'}, []),
 ('quota:vif_inbound_burst', {'min': 0, 'type': 'int'}, []),
 ('quota:vif_outbound_average', {'min': 0, 'type': 'int'}, []),
 ('quota:vif_outbound_peak', {'min': 0, 'type': 'int'}, []),
 ('quota:vif_outbound_burst', {'min': 0, 'type': 'int'}, []),
 ('resources{group}:CUSTOM_{resource}',
  {'type': 'int'},
  [('group', '([a-zA-Z0-9_-]{1,64})?'), ('resource', '[A-Z0-9_]+')]),
 ('trait{group}:CUSTOM_{trait}',
  {'enum': ['required', 'forbidden'], 'type': 'str'},
  [('group', '([a-zA-Z0-9_-]{1,64})?'), ('trait', '[A-Z0-9_]+')]),
 ('vmware:hw_version', {'type': 'str'}, []),
 ('vmware:storage_policy', {'type': 'str'}, []),
 ('resources{group}:{resource}',
  {'type': 'int'},
  [('group', '([a-zA-Z0-9_-]{1,64})?'), ('resource', '[A-Z0-9_]+')]),
 ('trait{group}:{trait}',
  {'enum': ['required', 'forbidden'], 'type': 'str'},
  [('group', '([a-zA-Z0-9_-]{1,64})?'), ('trait', '[A-Z0-9_]+')])]


@functools.cache
def _compiled():
    rules, namespaces = {}, set()
    for name, value, params in _RULES:
        regex = name
        for param, pattern in params:
            regex = regex.replace(f"{{{param}}}", f"(?P<{param}>{pattern})")
        rules[name] = (re.compile(regex), value)
        if ":" in regex:
            namespaces.add(regex.split(":", 1)[0])
    return rules, [re.compile(ns) for ns in namespaces]


def _check_value(value_rule: dict, value) -> None:
    text = str(value)
    kind = value_rule["type"]
    if kind == "int":
        try:
            number = int(text)
        except ValueError:
            raise exceptions.BadRequest(
                f"Validation failed; '{text}' is not a valid integer value.") from None
        if "max" in value_rule and value_rule["max"] < number:
            raise exceptions.BadRequest(f"Validation failed; '{text}' is greater than the max "
                                        f"value of '{value_rule['max']}'.")
        if "min" in value_rule and value_rule["min"] > number:
            raise exceptions.BadRequest(f"Validation failed; '{text}' is less than the min "
                                        f"value of '{value_rule['min']}'.")
    elif kind == "bool":
        from oslo_utils import strutils

        try:
            strutils.bool_from_string(text, strict=True)
        except ValueError:
            raise exceptions.BadRequest(
                f"Validation failed; '{text}' is not a valid boolean-like value.") from None
    elif "pattern" in value_rule:
        if not re.fullmatch(value_rule["pattern"], text):
            raise exceptions.BadRequest(f"Validation failed; '{text}' is not of the format "
                                        f"'{value_rule['pattern']}'.")
    elif "enum" in value_rule and text not in value_rule["enum"]:
        values = ", ".join(str(x) for x in value_rule["enum"])
        raise exceptions.BadRequest(f"Validation failed; '{text}' is not one of: {values}.")


def validate(name: str, value) -> None:
    """400 in nova's words for a known extra spec with a bad value, or an unknown one in a
    namespace nova knows."""
    rules, namespaces = _compiled()
    if name in rules:
        return _check_value(rules[name][1], value)
    for regex, value_rule in rules.values():
        if regex.fullmatch(name):
            return _check_value(value_rule, value)
    if ":" not in name:
        return None
    prefix = name.split(":", 1)[0]
    if any(ns.fullmatch(prefix) for ns in namespaces):
        raise exceptions.BadRequest(f"Validation failed; extra spec '{name}' does not appear "
                                    "to be a valid extra spec.")
    return None
