"""RPC between the processes of one machine (`pocketstack up --workers N`): ``unix://DIR``.

No broker: every RPC server listens on a Unix domain socket ``DIR/<topic>@<server>.sock``
(the data dir's ``rpc/`` in practice: 0700, so only the cloud's user can connect, and the
server checks the peer's uid as well). A client of ``compute`` with ``server=cmp-1``
connects to ``compute@cmp-1.sock``; a client of a topic without a server (``conductor``,
``scheduler``) picks one of that topic's sockets in turn. A server of this process is
called directly, exactly as ``inproc://`` does (``rpc_inproc.InProcServer``).

Frames are a 4-byte length and a JSON object: ``{"call"|"cast": method, "ctx", "kwargs"}``;
a call's reply is ``{"result": …}`` or ``{"error": …}`` on the same connection. A frame
that is not such an object gets an error reply, one warning line, and its connection
closed. Clients keep idle connections per socket; a server reads each connection on its
own thread, runs calls there (as ``inproc://`` runs them on the caller's thread) and casts
on its worker pool. Like ``inproc://``, a cast whose process dies is lost: the conductor's recovery
and
stalled-build check cover builds (compute/conductor/recovery.py).
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import json
import logging
import os
import socket
import stat
import struct
import tempfile
import threading
import time

from pocketstack.common import config, exceptions, rpc_inproc, runtime
from pocketstack.common.rpc_errors import (MessagingTimeout, MessagingUnavailable,
                                           exception_from_dict, exception_to_dict)

LOG = logging.getLogger(__name__)

_LENGTH = struct.Struct("!I")
MAX_FRAME = 64 * 1024 * 1024
_SUN_PATH_MAX = 100  # sun_path holds 108 bytes with the NUL; leave room for long names
_LISTING_TTL = 1.0   # seconds a topic's socket listing is reused


# --- where the sockets are ------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def socket_dir(transport_url: str) -> str:
    """The directory of ``unix:///abs/dir``, created 0700 if missing. A path too long for a
    socket name maps to a private directory in /tmp named by the path's hash."""
    path = transport_url[len("unix://"):]
    if not path.startswith("/"):
        raise config.ConfigError(
            f"transport_url {transport_url!r}: unix:// needs an absolute directory, "
            "e.g. unix:///home/me/.local/share/pocketstack/rpc")
    path = os.path.normpath(path)
    if len(path) + 48 > _SUN_PATH_MAX:
        digest = hashlib.sha256(path.encode()).hexdigest()[:16]
        base = os.path.join(tempfile.gettempdir(), f"pocketstack-rpc-{os.getuid()}")
        _private_dir(base)
        path = os.path.join(base, digest)
    _private_dir(path)
    return path


def _private_dir(path: str) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise config.ConfigError(f"{path} is not a directory of this user: refusing to "
                                     "put RPC sockets there.")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)


def socket_name(topic: str, server: str) -> str:
    return f"{topic}@{server}.sock"


# --- frames -----------------------------------------------------------------------------------

def _send(sock: socket.socket, message: dict) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    sock.sendall(_LENGTH.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, size: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < size:
        chunk = sock.recv(size - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


class BadFrame(ValueError):
    """A frame that is not a JSON object, or not an RPC message."""


def _recv(sock: socket.socket) -> dict | None:
    """The next frame, or None when the peer closed the connection; BadFrame if it is not
    a JSON object."""
    head = _recv_exact(sock, _LENGTH.size)
    if head is None:
        return None
    (size,) = _LENGTH.unpack(head)
    if size > MAX_FRAME:
        raise ConnectionError(f"RPC frame of {size} bytes refused")
    body = _recv_exact(sock, size)
    if body is None:
        return None
    try:
        message = json.loads(body)
    except RecursionError:  # json's scanner recurses once per level of nesting
        raise BadFrame("RPC frame nested too deeply") from None
    except ValueError as error:  # UnicodeDecodeError too
        raise BadFrame(f"RPC frame is not JSON: {str(error)[:100]}") from None
    if not isinstance(message, dict):
        raise BadFrame(f"RPC frame is a JSON {type(message).__name__}, not an object")
    return message


def _check_message(message: dict) -> None:
    """A call or cast: ``{"call"|"cast": method name, "ctx": {...}, "kwargs": {...}}``."""
    method = message.get("cast" if "cast" in message else "call")
    if not (isinstance(method, str) and isinstance(message.get("ctx"), dict)
            and isinstance(message.get("kwargs"), dict)):
        raise BadFrame("RPC frame is not a call or cast message")


def _peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


# --- server -----------------------------------------------------------------------------------

class UnixServer:
    """An RPC server on ``DIR/<topic>@<server>.sock``, also registered on this process's
    in-process bus so local clients skip the socket."""

    def __init__(self, topic: str, server: str | None, endpoints: list, workers: int,
                 transport_url: str):
        self.local = rpc_inproc.InProcServer(topic, server, endpoints, workers)
        self.topic = topic
        name = server or f"{config.CONF.host}.{os.getpid()}"
        self.path = os.path.join(socket_dir(transport_url), socket_name(topic, name))
        self.listener: socket.socket | None = None
        self.connections: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.stopping = False

    def start(self) -> None:
        _private_dir(os.path.dirname(self.path))  # socket_dir() is cached: it may be gone
        self._take_path()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        listener.listen(256)
        self.listener = listener
        self.local.start()
        threading.Thread(target=runtime.bind(self._accept), daemon=True,
                         name=f"rpc-accept-{os.path.basename(self.path)}").start()

    def _take_path(self) -> None:
        """A socket file left by a dead process is removed; one a live server answers on
        is an error (two agents for one host would split its messages)."""
        if not os.path.exists(self.path):
            return
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(self.path)
        except OSError:
            os.unlink(self.path)
            return
        finally:
            probe.close()
        raise exceptions.Conflict(f"Another process already serves {self.path}")

    def _accept(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed by stop()
            if _peer_uid(conn) != os.getuid():
                LOG.warning("RPC connection to %s from another user refused", self.path)
                conn.close()
                continue
            with self.lock:
                self.connections.add(conn)
            threading.Thread(target=runtime.bind(self._serve), args=(conn,), daemon=True,
                             name=f"rpc-conn-{self.topic}").start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            while not self.stopping:
                message = _recv(conn)
                if message is None:
                    return
                _check_message(message)
                if "cast" in message:
                    self.local.pool.submit(self._cast, message)
                else:
                    _send(conn, self._call(message))
        except BadFrame as error:
            # Our peers never send these: one line, an error answer, and the connection
            # ends (after a bad frame there is no telling whether a reply is awaited).
            LOG.warning("RPC connection to %s closed: %s", self.path, error)
            conn.settimeout(1)  # a peer that does not read must not hold this thread
            try:
                _send(conn, {"error": exception_to_dict(exceptions.BadRequest(str(error)))})
            except OSError:
                pass
        except (OSError, ValueError) as error:
            if not self.stopping:
                LOG.warning("RPC connection to %s dropped: %s", self.path, error)
        finally:
            with self.lock:
                self.connections.discard(conn)
            conn.close()

    def _call(self, message: dict) -> dict:
        try:
            return {"result": self.local.dispatch(message["ctx"], message["call"],
                                                  message["kwargs"])}
        except exceptions.PocketstackError as error:
            return {"error": exception_to_dict(error)}
        except Exception as error:  # noqa: BLE001 - the caller gets a RemoteError
            LOG.exception("RPC call %s.%s failed", self.topic, message.get("call"))
            return {"error": exception_to_dict(error)}

    def _cast(self, message: dict) -> None:
        try:
            self.local.dispatch(message["ctx"], message["cast"], message["kwargs"])
        except Exception:  # noqa: BLE001 - a cast has no caller to report to
            LOG.exception("RPC cast %s.%s failed", self.topic, message.get("cast"))

    def stop(self) -> None:
        self.stopping = True
        self.local.stop()
        if self.listener is not None:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self.listener.close()
        with self.lock:
            for conn in self.connections:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def wait(self) -> None:
        self.local.wait()


# --- client -----------------------------------------------------------------------------------

class _Connections:
    """One cloud's idle client connections, by socket path (common/runtime.py)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle: dict[str, list[socket.socket]] = {}
        self.listings: dict[str, tuple[float, list[str]]] = {}
        self.turn = itertools.count()

    def take(self, path: str) -> socket.socket | None:
        with self.lock:
            pool = self.idle.get(path)
            return pool.pop() if pool else None

    def give_back(self, path: str, sock: socket.socket) -> None:
        with self.lock:
            self.idle.setdefault(path, []).append(sock)

    def close_all(self) -> None:
        with self.lock:
            for pool in self.idle.values():
                for sock in pool:
                    sock.close()
            self.idle.clear()


def _connections() -> _Connections:
    return runtime.current().slot(__name__, _Connections)


def cleanup() -> None:
    _connections().close_all()


class UnixClient:
    def __init__(self, topic: str, server: str | None, timeout: float | None,
                 transport_url: str):
        self.topic, self.server, self.timeout = topic, server, timeout
        self.transport_url = transport_url
        self.local = rpc_inproc.InProcClient(topic, server, timeout)

    def _target_name(self) -> str:
        return self.topic + (f".{self.server}" if self.server else "")

    def _paths(self) -> list[str]:
        directory = socket_dir(self.transport_url)
        if self.server is not None:
            return [os.path.join(directory, socket_name(self.topic, self.server))]
        conns = _connections()
        now = time.monotonic()
        cached = conns.listings.get(directory + "/" + self.topic)
        if cached is None or now - cached[0] > _LISTING_TTL:
            prefix = self.topic + "@"
            try:
                names = os.listdir(directory)
            except FileNotFoundError:
                names = []
            found = sorted(os.path.join(directory, n) for n in names
                           if n.startswith(prefix) and n.endswith(".sock"))
            cached = (now, found)
            conns.listings[directory + "/" + self.topic] = cached
        paths = cached[1]
        if len(paths) > 1:  # in turn, so the work spreads over the processes
            start = next(conns.turn) % len(paths)
            paths = paths[start:] + paths[:start]
        return paths

    def _is_local(self) -> bool:
        return rpc_inproc.bus().find(self.topic, self.server) is not None

    def _send(self, message: dict, reply: bool) -> dict | None:
        """Send on a pooled or new connection to the first socket that accepts it; wait for
        the reply of a call. A pooled connection the server closed is replaced once."""
        conns = _connections()
        for path in self._paths():
            sock = conns.take(path)
            fresh = sock is None
            try:
                if sock is None:
                    sock = _connect(path)
                sock.settimeout(self.timeout)
                try:
                    _send(sock, message)
                except OSError:
                    if fresh:
                        raise
                    sock.close()
                    sock = _connect(path)
                    sock.settimeout(self.timeout)
                    _send(sock, message)
            except (FileNotFoundError, ConnectionRefusedError):
                if sock is not None:
                    sock.close()
                continue  # a server that is gone: the next one of the topic, if any
            except OSError as error:
                if sock is not None:
                    sock.close()
                raise MessagingUnavailable(f"RPC to {self._target_name()} failed: "
                                           f"{error}") from None
            if not reply:
                conns.give_back(path, sock)
                return None
            try:
                answer = _recv(sock)
            except socket.timeout:
                sock.close()
                raise MessagingTimeout(f"No reply from {self._target_name()} within "
                                       f"{self.timeout:g}s") from None
            except (OSError, ValueError) as error:
                sock.close()
                raise MessagingUnavailable(f"RPC to {self._target_name()} failed: "
                                           f"{error}") from None
            if answer is None:
                sock.close()
                raise MessagingUnavailable(f"{self._target_name()} closed the connection "
                                           "before answering")
            conns.give_back(path, sock)
            return answer
        raise MessagingTimeout(f"No service is listening on {self._target_name()}")

    def _message(self, kind: str, ctx, method: str, kwargs: dict) -> dict:
        return {kind: method, "ctx": rpc_inproc.context_dict(ctx), "kwargs": kwargs}

    def call(self, ctx, method: str, **kwargs):
        if self._is_local():
            return self.local.call(ctx, method, **kwargs)
        answer = self._send(self._message("call", ctx, method, kwargs), reply=True)
        if "error" in answer:
            raise exception_from_dict(answer["error"])
        return answer.get("result")

    def cast(self, ctx, method: str, **kwargs) -> None:
        if self._is_local():
            return self.local.cast(ctx, method, **kwargs)
        self._send(self._message("cast", ctx, method, kwargs), reply=False)


def _connect(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock
