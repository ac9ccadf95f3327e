"""The errors RPC raises, and how an error travels in a reply: the same on every transport
(in-process: rpc_inproc.py, unix://: rpc_unix.py, oslo.messaging: rpc.py), so a caller gets
the same exception whichever carried the message. Callers catch them as
rpc.MessagingTimeout etc.; they live down here so that the transports below rpc.py need
not import it."""
from __future__ import annotations

import importlib

from pocketstack.common import exceptions


class RemoteError(exceptions.PocketstackError):
    """An unexpected exception raised by the remote endpoint."""

    exc_type = "Exception"  # class defaults keep a RemoteError rebuilt from a reply usable
    value = ""

    def __init__(self, exc_type: str, value: str):
        self.exc_type = exc_type
        self.value = value
        super().__init__(f"Remote error: {exc_type} {value}")


class NoSuchMethod(exceptions.PocketstackError):
    pass


class MessagingTimeout(exceptions.PocketstackError):
    code = 504
    message = "Timed out waiting for a reply."


class MessagingUnavailable(exceptions.ServiceUnavailable):
    message = "The message bus cannot be reached."


def exception_to_dict(error: BaseException) -> dict:
    return {"module": type(error).__module__, "class": type(error).__name__,
            "message": str(getattr(error, "message", error)), "code": getattr(error, "code", 500),
            "type_name": getattr(error, "type_name", None), "detail": getattr(error, "detail", "")}


def exception_from_dict(data: dict) -> exceptions.PocketstackError:
    """Rebuild a PocketstackError subclass if we know it, else a RemoteError."""
    if data["module"].startswith("pocketstack."):
        try:
            cls = getattr(importlib.import_module(data["module"]), data["class"])
            if issubclass(cls, exceptions.PocketstackError):
                error = cls.__new__(cls)
                exceptions.PocketstackError.__init__(error, data["message"],
                                                     type_name=data.get("type_name"),
                                                     detail=data.get("detail") or "")
                return error
        except (ImportError, AttributeError, TypeError):
            pass
    return RemoteError(data["class"], data["message"])
