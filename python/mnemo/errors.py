"""Exceptions: one class per mn_status (include/mnemo.h), each carrying the library's message.

    try:
        mem.history(sid)
    except mnemo.NotFound as e:
        print(e.code, e.message)       # "not_found", "session 0190…: no such session"
"""
from __future__ import annotations

from typing import Dict, Optional, Type


class MnemoError(Exception):
    """Base of every error raised by mnemo. `status` is the mn_status number, `code` its short
    name ("not_found", "invalid", …) and `message` the library's message naming the field."""

    status: int = -1
    code: str = "error"

    def __init__(self, message: str, status: Optional[int] = None, code: Optional[str] = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class NotFound(MnemoError):
    """MN_NOTFOUND: no such session or message."""
    status, code = 1, "not_found"


class Invalid(MnemoError, ValueError):
    """MN_INVALID: invalid argument (the message names the field and the limit)."""
    status, code = 2, "invalid"


class Busy(MnemoError):
    """MN_BUSY: the database stayed locked past memory.busy_timeout_ms, or a fold is in flight."""
    status, code = 3, "busy"


class Expired(MnemoError):
    """MN_EXPIRED: the thread passed its TTL (the message gives when)."""
    status, code = 4, "expired"


class TooBig(MnemoError, ValueError):
    """MN_TOOBIG: a value exceeds a size limit."""
    status, code = 5, "too_big"


class IO(MnemoError):
    """MN_IO: input/output error (a file that cannot be opened, a failed write or read)."""
    status, code = 6, "io"


class Corrupt(MnemoError):
    """MN_CORRUPT: data is corrupt or not a mnemo database."""
    status, code = 7, "corrupt"


class Unavailable(MnemoError):
    """MN_UNAVAILABLE: a required resource or provider (embedder, summariser, rank file) is unavailable."""
    status, code = 8, "unavailable"


class NoMemory(MnemoError, MemoryError):
    """MN_NOMEM: out of memory."""
    status, code = 9, "no_memory"


class Misuse(MnemoError):
    """MN_MISUSE: library used incorrectly (for example a call on a closed Memory)."""
    status, code = 10, "misuse"


class Conflict(MnemoError):
    """MN_CONFLICT: conflicts with existing data (a taken id, an idempotency key reused for another
    message, vectors of another embedder)."""
    status, code = 11, "conflict"


class Internal(MnemoError):
    """MN_INTERNAL: internal error."""
    status, code = 12, "internal"


class LibraryError(MnemoError, ImportError):
    """libmnemo could not be found or is too old; the message names every place looked."""
    code = "library"


BY_STATUS: Dict[int, Type[MnemoError]] = {
    cls.status: cls
    for cls in (NotFound, Invalid, Busy, Expired, TooBig, IO, Corrupt, Unavailable, NoMemory, Misuse,
                Conflict, Internal)
}


def from_status(status: int, message: str) -> MnemoError:
    """The exception for a failed call: the class named after `status`, MnemoError for an unknown one."""
    cls = BY_STATUS.get(status)
    if cls is None:
        return MnemoError(message or "mnemo status %d" % status, status, "unknown")
    return cls(message or (cls.__doc__ or "").split(": ", 1)[-1].rstrip("."))
