"""Modules that a library imports at its top but a start of pocketstack never uses,
imported when something first uses them instead (a start pays for what it needs).

``defer(name)`` puts a stand-in for the module in ``sys.modules``: ``import name`` then
binds the stand-in, and the first attribute anyone asks of it imports the real module
(which takes the stand-in's place) and answers from it. Used for:

* ``stevedore``: oslo.config imports it for ``config_source`` drivers, oslo.policy for
  plugin checks (``policy._ExternalChecks`` answers those); it imports
  ``importlib.metadata`` and a hundred modules (~45 ms).
* ``netaddr``, ``rfc3986``: oslo.config's IP address and URI option types; pocketstack
  registers none (~45 ms together).
* ``oslo_utils.strutils``: oslo.policy masks passwords in debug logs with it; it compiles
  425 regular expressions as it is imported (~50 ms).
* ``yaml``: oslo.policy reads policy files with it; a cloud without a policy.yaml (the
  default) never does (~15 ms).
* ``xmlrpc.client`` (deferred in policy.py): oslo.serialization's jsonutils (imported by
  oslo.policy) checks values against its DateTime class; it imports the XML parser (~3 ms).

Dunder attributes other than ``__path__`` (``__file__``, ``__version__``: what tools
scanning ``sys.modules`` look at) do not import the module.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types

_lock = threading.Lock()


class _Deferred(types.ModuleType):
    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__") and attr != "__path__":
            raise AttributeError(attr)
        name = self.__name__
        with _lock:
            if sys.modules.get(name) is self:
                del sys.modules[name]
            real = importlib.import_module(name)
        return getattr(real, attr)


def defer(name: str) -> None:
    """Import ``name`` on first use (nothing happens if it is imported already or is not
    installed)."""
    with _lock:
        if name in sys.modules:
            return
        parent = name.rpartition(".")[0]
        if parent and parent not in sys.modules:
            importlib.import_module(parent)
        spec = importlib.util.find_spec(name)
        if spec is None:
            return
        stand_in = _Deferred(name)
        stand_in.__spec__ = spec
        sys.modules[name] = stand_in
