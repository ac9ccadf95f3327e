"""Swift's errors: a status with swob's HTML page (``wsgi/faults.swift``) or, when swift
gives a reason, that reason as plain text."""
from __future__ import annotations

from pocketstack.common.exceptions import PocketstackError


class SwiftError(PocketstackError):
    def __init__(self, code: int, text: str | None = None, headers: dict | None = None):
        self.code = code
        self.plain = text is not None
        super().__init__(text or "", headers=headers)


def bad_request(text: str | None = None) -> SwiftError:
    return SwiftError(400, text)


def not_found() -> SwiftError:
    return SwiftError(404)


def precondition_failed(text: str | None = None) -> SwiftError:
    return SwiftError(412, text)
