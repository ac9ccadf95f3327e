"""Placement: resource providers, inventories, traits, aggregates and allocations
(OpenStack Placement's API, microversions 1.0-1.39, under /placement)."""
