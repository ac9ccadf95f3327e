"""vm_state / task_state / power_state as nova names them, and the API status they show
(seed 001's table: BUILD/scheduling → networking → block_device_mapping → spawning →
ACTIVE/None/Running)."""
from __future__ import annotations

# vm states
ACTIVE, BUILDING, PAUSED = "active", "building", "paused"
SUSPENDED, STOPPED = "suspended", "stopped"
RESIZED, ERROR, DELETED, SOFT_DELETED = "resized", "error", "deleted", "soft-delete"
SHELVED, SHELVED_OFFLOADED, RESCUED = "shelved", "shelved_offloaded", "rescued"

# task states
SCHEDULING, NETWORKING, BLOCK_DEVICE_MAPPING, SPAWNING = (
    "scheduling", "networking", "block_device_mapping", "spawning")
POWERING_OFF, POWERING_ON, REBOOTING, REBOOTING_HARD = (
    "powering-off", "powering-on", "rebooting", "rebooting_hard")
PAUSING, UNPAUSING, SUSPENDING, RESUMING = "pausing", "unpausing", "suspending", "resuming"
REBUILDING, REBUILD_SPAWNING = "rebuilding", "rebuild_spawning"
RESIZE_PREP, RESIZE_MIGRATING, RESIZE_FINISH = "resize_prep", "resize_migrating", "resize_finish"
RESIZE_REVERTING, RESIZE_CONFIRMING = "resize_reverting", "resize_confirming"
RESIZE_MIGRATED = "resize_migrated"
IMAGE_SNAPSHOT, IMAGE_UPLOADING = "image_snapshot", "image_uploading"
DELETING = "deleting"
RESCUING, UNRESCUING, UPDATING_PASSWORD = "rescuing", "unrescuing", "updating_password"
SHELVING, SHELVING_IMAGE_UPLOADING = "shelving", "shelving_image_uploading"
SHELVING_OFFLOADING, UNSHELVING = "shelving_offloading", "unshelving"
MIGRATING, REBUILD_SCHEDULING = "migrating", "rebuild_scheduling"
SOFT_DELETING, RESTORING = "soft-deleting", "restoring"
BUILD_TASKS = (SCHEDULING, NETWORKING, BLOCK_DEVICE_MAPPING, SPAWNING)

# power states (nova's integers)
NOSTATE, RUNNING, PAUSED_POWER, SHUTDOWN, CRASHED, SUSPENDED_POWER = 0, 1, 3, 4, 6, 7
POWER_NAMES = {NOSTATE: "NOSTATE", RUNNING: "Running", PAUSED_POWER: "Paused",
               SHUTDOWN: "Shutdown", CRASHED: "Crashed", SUSPENDED_POWER: "Suspended"}

_RESIZE = {RESIZE_PREP: "RESIZE", RESIZE_MIGRATING: "RESIZE", RESIZE_MIGRATED: "RESIZE",
           RESIZE_FINISH: "RESIZE"}
_REBUILD = {REBUILDING: "REBUILD", REBUILD_SPAWNING: "REBUILD"}
STATE_MAP = {
    ACTIVE: {"default": "ACTIVE", REBOOTING: "REBOOT", REBOOTING_HARD: "HARD_REBOOT",
             **_REBUILD, **_RESIZE, MIGRATING: "MIGRATING"},
    BUILDING: {"default": "BUILD"},
    STOPPED: {"default": "SHUTOFF", **_RESIZE, **_REBUILD},
    RESIZED: {"default": "VERIFY_RESIZE", RESIZE_REVERTING: "REVERT_RESIZE"},
    PAUSED: {"default": "PAUSED", MIGRATING: "MIGRATING"},
    SUSPENDED: {"default": "SUSPENDED"},
    RESCUED: {"default": "RESCUE"},
    ERROR: {"default": "ERROR", **_REBUILD},
    DELETED: {"default": "DELETED"},
    SOFT_DELETED: {"default": "SOFT_DELETED"},
    SHELVED: {"default": "SHELVED"},
    SHELVED_OFFLOADED: {"default": "SHELVED_OFFLOADED"},
}


def status(vm_state: str | None, task_state: str | None) -> str:
    task_map = STATE_MAP.get(vm_state or "", {"default": "UNKNOWN"})
    return task_map.get(task_state, task_map["default"])


def states_for_status(name: str) -> tuple[set[str], set[str | None]] | None:
    """(vm_states, task_states) behind an API status, for the ?status= filter."""
    vms: set[str] = set()
    tasks: set[str | None] = set()
    for vm, task_map in STATE_MAP.items():
        for task, mapped in task_map.items():
            if mapped == name.upper():
                vms.add(vm)
                tasks.add(None if task == "default" else task)
    return (vms, tasks) if vms else None


ALL_STATUSES = sorted({s for m in STATE_MAP.values() for s in m.values()})
