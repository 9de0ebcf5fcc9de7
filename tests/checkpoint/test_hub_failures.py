"""A Hub that misbehaves: real sockets on 127.0.0.1, the CLI run as a user runs it.

Each server runs in a thread and ``HF_ENDPOINT`` points huggingface_hub at it. Every case must
end within the deadline (``--timeout 1``; two attempts, one second of backoff), exit 2 and
print exactly one line saying what went wrong, with no traceback and no token.

Before the bounded transport (recipecli.checkpoint.hub.hub_requests), the silent server hung
until huggingface_hub's 10 s etag timeout times its retries, the 500 server took ~24 s of
retries, and the messages said only "cannot reach the Hub (... )".
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

TOKEN = "hf_SeCrEtT0kenNeverShown0123456789"


class Server:
    """Accept connections on 127.0.0.1 and hand each to ``handle`` in its own thread."""

    def __init__(self, handle: Callable[[socket.socket], None]):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.port = self.sock.getsockname()[1]
        self.handle = handle
        self.connections = 0
        self.open: list[socket.socket] = []
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            self.open.append(conn)
            threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn: socket.socket) -> None:
        try:
            self.handle(conn)
        except OSError:
            pass

    def close(self) -> None:
        self.stop.set()
        for conn in self.open:
            try:
                conn.close()
            except OSError:
                pass
        self.sock.close()


def read_request(conn: socket.socket) -> bytes:
    conn.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def silent(conn: socket.socket) -> None:
    """Accept and never answer (keeps the connection open)."""
    read_request(conn)
    time.sleep(30)


def error_500(conn: socket.socket) -> None:
    while read_request(conn):
        conn.sendall(
            b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n"
            b"Connection: keep-alive\r\n\r\noops!"
        )


def probe_then_silent(conn: socket.socket) -> None:
    """Answer ``HEAD /`` (recipecli's reachability probe), then never answer a file request."""
    while True:
        request = read_request(conn)
        if not request:
            return
        if request.split(b" ", 2)[1] == b"/":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            continue
        time.sleep(30)
        return


def reset(conn: socket.socket) -> None:
    """Read the request, then close with RST (SO_LINGER 0)."""
    read_request(conn)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


#: Headers huggingface_hub's file-metadata HEAD needs before it sends the GET (commit, ETag).
FILE_HEADERS = b'ETag: "0123abcd"\r\nX-Repo-Commit: ' + b"0" * 40 + b"\r\n"


def trickle(conn: socket.socket) -> None:
    """Answer every HEAD at once (the reachability probe, the config.json metadata), then the
    GET's headers at once and one body byte every 0.2 s (each read well within the timeout,
    the whole answer far past it). Keep-alive: with one request per connection the outcome
    depended on whether the client reused the connection (a flaky test)."""
    while True:
        request = read_request(conn)
        if not request:
            return
        if request.startswith(b"HEAD "):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n" + FILE_HEADERS + b"\r\n")
            continue
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n" + FILE_HEADERS + b"\r\n")
        for _ in range(1000):
            conn.sendall(b"x")
            time.sleep(0.2)
        return


def plain_http(conn: socket.socket) -> None:
    """Answer a TLS client hello with plain HTTP: the client's handshake fails."""
    conn.settimeout(5)
    conn.recv(65536)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


@pytest.fixture
def serve(tmp_path) -> Iterator[Callable[..., tuple[subprocess.CompletedProcess, float, Server]]]:
    servers: list[Server] = []

    def run(handle, *args: str, scheme: str = "http", timeout: str = "1"):
        server = Server(handle)
        servers.append(server)
        env = dict(
            os.environ,
            HF_ENDPOINT=f"{scheme}://127.0.0.1:{server.port}",
            HF_HUB_CACHE=str(tmp_path / "cache"),
            HF_TOKEN=TOKEN,
            HF_HUB_DISABLE_TELEMETRY="1",
        )
        env.pop("HF_HUB_OFFLINE", None)
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
            env.pop(key, None)
        cmd = [sys.executable, "-m", "recipecli", *(args or ("inspect", "org/name"))]
        cmd += ["--timeout", timeout]
        t0 = time.monotonic()
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=60, cwd=str(tmp_path)
        )
        return proc, time.monotonic() - t0, server

    yield run
    for server in servers:
        server.close()


def assert_one_line(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert TOKEN not in proc.stderr + proc.stdout and TOKEN[3:15] not in proc.stderr
    return lines[0]


# Budgets: the interpreter starts in ~1 s on a loaded 2-core machine; the deadline is 1 s.
START = 6.0


def test_silent_server_gives_up_after_the_deadline(serve):
    proc, took, _ = serve(silent)
    assert_one_line(proc, "cannot reach the Hub for org/name", "did not answer within 1 s")
    assert took < START + 2, took


def test_server_silent_after_the_probe_is_bounded(serve):
    """Before: the probe passed, then huggingface_hub waited and retried for minutes."""
    proc, took, _ = serve(probe_then_silent)
    assert_one_line(proc, "cannot reach the Hub for org/name", "did not answer within 1 s")
    assert took < START + 3, took


def test_silent_server_check_command(serve):
    proc, took, _ = serve(silent, "check", "org/target", "org/draft")
    assert_one_line(proc, "cannot reach the Hub for org/target", "did not answer within 1 s")
    assert took < START + 2, took


def test_http_500_is_one_line_and_fast(serve):
    proc, took, _ = serve(error_500)
    assert_one_line(proc, "cannot reach the Hub for org/name", "answered HTTP 500")
    assert took < START + 3, took


def test_reset_connection_is_one_line(serve):
    proc, took, server = serve(reset)
    assert_one_line(proc, "cannot reach the Hub for org/name", "reset")
    assert took < START + 3, took
    assert server.connections <= 4  # bounded attempts, not huggingface_hub's five retries


def test_trickling_answer_hits_the_total_deadline(serve):
    """connect + read together: a server that keeps every read short but never finishes."""
    proc, took, _ = serve(trickle, timeout="1.5")
    assert_one_line(
        proc, "cannot reach the Hub for org/name", "did not finish answering within 1.5 s"
    )
    assert took < START + 4, took


def test_tls_error_is_one_line(serve):
    proc, took, _ = serve(plain_http, scheme="https")
    assert_one_line(proc, "cannot reach the Hub for org/name", "TLS error")
    assert took < START + 2, took


def test_timeout_must_be_positive(serve):
    proc, _, _ = serve(silent, timeout="0")
    assert proc.returncode == 2 and "--timeout" in proc.stderr and "Traceback" not in proc.stderr
