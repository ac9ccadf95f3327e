"""The libvirt/QEMU hypervisor driver: config.py (guest model → domain XML),
imagecache.py (base images, instance disks), host.py (connection, lifecycle events),
driver.py (LibvirtDriver). libvirt-python is imported lazily by host.py, so this package
imports without it; `pip install 'pocketstack[libvirt]'` provides it."""
