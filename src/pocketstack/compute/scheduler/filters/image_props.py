"""ImagePropertiesFilter: hw_architecture, img_hv_type/hypervisor_type, hw_vm_mode."""
from pocketstack.compute.scheduler.filters.base import Filter

_ARCH = ("hw_architecture", "architecture")
_HV = ("img_hv_type", "hypervisor_type")


class ImagePropertiesFilter(Filter):
    name = "ImagePropertiesFilter"

    def applies(self, spec):
        props = spec.get("image_properties") or {}
        return any(k in props for k in _ARCH + _HV + ("hw_vm_mode", "vm_mode"))

    def reject(self, host, spec, context):
        props = spec["image_properties"]
        arch = next((props[k] for k in _ARCH if props.get(k)), None)
        if arch and arch not in (host.arch, "i686" if host.arch == "x86_64" else None):
            return f"{host.host} is {host.arch}, the image needs {arch}"
        hv = next((props[k] for k in _HV if props.get(k)), None)
        if hv and hv.lower() not in (host.hypervisor_type.lower(),):
            return f"{host.host} runs {host.hypervisor_type}, the image needs {hv}"
        mode = props.get("hw_vm_mode") or props.get("vm_mode")
        if mode and mode not in ("hvm",):
            return f"{host.host} supports hvm, the image needs {mode}"
        return None
