"""The load balancer service: Octavia's v2 API (/load-balancer), with a simulated
provider driver that applies each change asynchronously and flips the statuses."""
