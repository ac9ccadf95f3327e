"""What a guest learns about itself: nova's metadata (content.py), served by compute's
metadata API at /metadata (rest.py) to the network agent's metadata proxy, which forwards
each guest's request from 169.254.169.254 in the network's DHCP namespace, and written to
a config drive ISO (configdrive.py)."""
