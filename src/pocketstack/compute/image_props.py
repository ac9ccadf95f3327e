"""The image properties a server shows from 2.98 (nova's views/servers.py _get_image): the
properties of the image it was built or last rebuilt from that nova's ImageMetaProps knows
(or their legacy names), as nova keeps them in the server's system metadata: strings."""
from __future__ import annotations

# nova/objects/image_meta.py: ImageMetaProps.fields
_FIELDS = (
    "hw_architecture hw_emulation_architecture hw_auto_disk_config hw_boot_menu "
    "hw_cdrom_bus hw_cpu_cores hw_cpu_sockets hw_cpu_max_cores hw_cpu_max_sockets "
    "hw_cpu_max_threads hw_cpu_policy hw_cpu_thread_policy hw_cpu_realtime_mask "
    "hw_cpu_threads hw_device_id hw_disk_bus hw_disk_type hw_floppy_bus hw_firmware_type "
    "hw_firmware_stateless hw_input_bus hw_ipxe_boot hw_locked_memory hw_machine_type "
    "hw_mem_encryption hw_mem_encryption_model hw_mem_page_size hw_numa_nodes hw_numa_cpus "
    "hw_numa_mem hw_pci_numa_affinity_policy hw_pointer_model hw_pmu hw_qemu_guest_agent "
    "hw_rescue_bus hw_rescue_device hw_rng_model hw_time_hpet hw_serial_port_count "
    "hw_scsi_model hw_video_model hw_video_ram hw_vif_model hw_viommu_model hw_vm_mode "
    "hw_watchdog_action hw_vif_multiqueue_enabled hw_tpm_model hw_tpm_version "
    "hw_ephemeral_encryption hw_ephemeral_encryption_secret_uuid hw_virtio_packed_ring "
    "hw_maxphysaddr_mode hw_maxphysaddr_bits hw_sound_model hw_usb_model "
    "hw_redirected_usb_ports img_bittorrent img_bdm_v2 img_cache_in_nova "
    "img_compression_level img_hv_requested_version img_hv_type img_config_drive "
    "img_linked_clone img_mappings img_owner_id img_root_device_name img_use_agent "
    "img_version img_signature img_signature_hash_method img_signature_certificate_uuid "
    "img_signature_key_type img_hide_hypervisor_id os_admin_user os_command_line os_distro "
    "os_require_quiesce os_secure_boot os_skip_agent_inject_files_at_boot "
    "os_skip_agent_inject_ssh os_type traits_required").split()
# ImageMetaProps._legacy_property_map's keys
_LEGACY = (
    "architecture owner_id vmware_disktype vmware_image_version vmware_ostype "
    "auto_disk_config ipxe_boot xenapi_device_id xenapi_image_compression_level "
    "vmware_linked_clone xenapi_use_agent xenapi_skip_agent_inject_ssh "
    "xenapi_skip_agent_inject_files_at_boot cache_in_nova vm_mode bittorrent mappings "
    "block_device_mapping bdm_v2 root_device_name hypervisor_version_requires "
    "hypervisor_type").split()
KNOWN = frozenset(_FIELDS) | frozenset(_LEGACY)


def shown(image: dict | None) -> dict:
    """The properties of a Glance image (flat, as the image API returns them) a server
    shows; values as nova's system metadata holds them (str)."""
    if not image:
        return {}
    return {k: v if isinstance(v, str) else str(v) for k, v in image.items()
            if k in KNOWN and v is not None}
