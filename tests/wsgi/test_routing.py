"""The route matcher (wsgi/routing.py) compares path segments instead of compiling a regex
per route; it must pick the same route with the same parameters as the templates'
regular expressions would, for every service's table and for paths that nearly match."""
from __future__ import annotations

import importlib

import pytest

from pocketstack.wsgi.routing import Router, _template_regex

SERVICES = ("identity", "compute", "image", "network", "volume", "control",
            "compute.metadata", "objectstore", "keymanager", "loadbalancer")


def _by_regex(table: dict, path: str):
    for template in table:
        m = _template_regex(template).match(path)
        if m:
            return template, m.groupdict()
    return None, None


def _paths(template: str) -> list[str]:
    """Paths made from a template: values for its parameters, and near misses."""
    filled = template
    for i, value in enumerate(("abc", "x.json", "1")):
        start = filled.find("{")
        if start < 0:
            break
        filled = filled[:start] + f"{value}{i}" + filled[filled.index("}", start) + 1:]
    return [filled, filled + "/", filled + "/extra", filled[:-1], filled + ".json",
            filled.replace("/", "//", 1), "/".join(filled.split("/")[:-1]),
            template, template.replace("{", "").replace("}", "")]


@pytest.mark.parametrize("service", SERVICES)
def test_every_route_matches_as_its_regex_would(service):
    table = importlib.import_module(f"pocketstack.{service}.rest").ROUTES
    router = Router(table, lambda: 0)
    paths = {p for template in table for p in _paths(template)} | {"/", "", "//", "/v2.0/"}
    for path in sorted(paths):
        route, params = router.match(path)
        assert ((route.path if route else None), params) == _by_regex(table, path), path


def test_segment_shapes_and_the_general_form():
    def h(req):
        return None

    table = {"/a/{x}.json": {"GET": h}, "/a/{x}": {"GET": h}, "/f/{rest:path}": {"GET": h},
             "/g/{a}-{b}": {"GET": h}, "/": {"GET": h}}
    router = Router(table, lambda: 0)
    for path in ("/a/id.json", "/a/.json", "/a/id", "/a/x.json.json", "/f/", "/f/a/b",
                 "/f//", "/g/1-2", "/g/1-2-3", "/g/-", "/", "/a", "/a/b/c"):
        route, params = router.match(path)
        assert ((route.path if route else None), params) == _by_regex(table, path), path
    assert router.match("/a/id.json")[1] == {"x": "id"}
    assert router.match("/f/a/b")[1] == {"rest": "a/b"}
    assert router.match("/g/1-2-3")[1] == {"a": "1-2", "b": "3"}  # the regex's greedy split
    assert router.match("/a/id")[0].methods["HEAD"] is h
