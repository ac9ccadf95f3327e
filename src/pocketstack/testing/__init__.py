"""Helpers for testing software against pocketstack: the pytest plugin
(``pocketstack.testing.pytest_plugin``, loaded automatically once pocketstack is installed)
and ``Project``, a throwaway project with a member user and a network."""
from pocketstack.testing.projects import Project

__all__ = ["Project"]
