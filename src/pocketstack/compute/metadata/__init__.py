"""What a guest learns about itself: nova's metadata (content.py), served over HTTP to
guests at 169.254.169.254 (server.py, through the listener the network agent puts in each
network's DHCP namespace) and written to a config drive ISO (configdrive.py)."""
