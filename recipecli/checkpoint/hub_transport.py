"""Bounded Hub requests: a deadline, two attempts and one final failure per stretch of requests.

While recipecli talks to the Hub (:func:`hub_requests`), huggingface_hub's shared HTTP client
(``huggingface_hub.utils.set_client_factory``) gets a transport wrapper that gives every request
a deadline of ``--timeout`` seconds (default 10) for connect, send, headers and body together,
allows each request two attempts (huggingface_hub retries 5xx, 429, resets and timeouts up to
five times with backoff, ~24 s), and after a final failure fails every further request at once.
The command then stops with one line saying what happened: no answer within the deadline, an HTTP
5xx, a reset connection, a TLS error (:class:`HubGuard` keeps the reason).

``httpx2`` and ``httpcore2`` (huggingface_hub's HTTP stack) are imported on use only: commands
that never reach the Hub do not load them.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from recipecli.checkpoint.hub_timeout import DEFAULT_TIMEOUT_S

if TYPE_CHECKING:
    import httpcore2
    import httpx2

#: Attempts per Hub request (the first try and one retry).
MAX_ATTEMPTS = 2


class HubGiveUp(Exception):
    """Raised inside the HTTP transport after a final failure (never retried by huggingface_hub,
    which retries only httpx errors and some status codes)."""


class HubGuard:
    """Deadline, attempt counts and the failure seen, for one stretch of Hub requests.

    Attributes:
        timeout: seconds each request may take, connect to last body byte.
        attempts: (method, URL without query) -> attempts made so far.
        failure: the final failure; every later request fails at once with it.
        problem: the last transient problem (a 5xx answered, a reset connection).
    """

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.attempts: dict[tuple[str, str], int] = {}
        self.failure: str | None = None
        self.problem: str | None = None

    def give_up(self, reason: str) -> HubGiveUp:
        """Record ``reason`` as the final failure (the first one stays) and return the error."""
        self.failure = self.failure or reason
        return HubGiveUp(self.failure)

    def reason(self) -> str | None:
        """What failed: the final failure, else the last transient problem, else None."""
        return self.failure or self.problem


def first_line(exc: BaseException, limit: int = 100) -> str:
    """The first line of ``str(exc)`` (its class name when empty), cut to ``limit`` characters."""
    text = (str(exc).splitlines() or [type(exc).__name__])[0] or type(exc).__name__
    return text[:limit]


def _is_tls(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            break
        if isinstance(seen, ssl.SSLError) or "SSL" in str(seen) or "CERTIFICATE" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


_deadline = threading.local()  # .at: monotonic time the current request of this thread must end


def _remaining(timeout: float | None, what: str) -> float | None:
    """``timeout`` cut to what is left of this thread's request deadline (raises when none)."""
    at: float | None = getattr(_deadline, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        import httpcore2

        raise (httpcore2.ConnectTimeout if what == "connect" else httpcore2.ReadTimeout)(
            "request deadline passed"
        )
    return left if timeout is None else min(timeout, left)


class _DeadlineStream:
    """An ``httpcore2`` network stream whose every operation waits at most until the deadline
    of the request of this thread."""

    def __init__(self, stream: httpcore2.NetworkStream):
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, _remaining(timeout, "read"))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        return self.stream.write(buffer, _remaining(timeout, "write"))

    def close(self) -> None:
        self.stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: Any = None
    ) -> _DeadlineStream:
        return _DeadlineStream(
            self.stream.start_tls(ssl_context, server_hostname, _remaining(timeout, "connect"))
        )

    def get_extra_info(self, info: str) -> Any:
        return self.stream.get_extra_info(info)


class _DeadlineBackend:
    """An ``httpcore2`` network backend whose connections are :class:`_DeadlineStream`: the
    deadline covers the whole request, not each socket operation (a server sending one byte a
    second never trips a per-read timeout)."""

    def __init__(self, backend: httpcore2.NetworkBackend):
        self.backend = backend

    def connect_tcp(
        self, host: str, port: int, timeout: Any = None, **kwargs: Any
    ) -> _DeadlineStream:
        stream = self.backend.connect_tcp(host, port, _remaining(timeout, "connect"), **kwargs)
        return _DeadlineStream(stream)

    def connect_unix_socket(self, path: str, timeout: Any = None, **kwargs: Any) -> _DeadlineStream:
        return _DeadlineStream(
            self.backend.connect_unix_socket(path, _remaining(timeout, "connect"), **kwargs)
        )

    def sleep(self, seconds: float) -> None:
        self.backend.sleep(seconds)


def _begin_attempt(request: httpx2.Request, guard: HubGuard) -> tuple[str, int, float]:
    """Count one attempt of ``request``, give it the guard's timeouts and set this thread's
    request deadline: ``(host, attempt number, start time)``."""
    host = request.url.host or "the Hub"
    key = (request.method, str(request.url.copy_with(query=None)))
    attempt = guard.attempts[key] = guard.attempts.get(key, 0) + 1
    t = guard.timeout
    request.extensions = {
        **request.extensions,
        "timeout": {"connect": t, "read": t, "write": t, "pool": t},
    }
    start = time.monotonic()
    _deadline.at = start + t
    return host, attempt, start


def _attempt_failed(exc: Exception, host: str, attempt: int, guard: HubGuard) -> HubGiveUp | None:
    """What a timeout, network or protocol error of one attempt means: the final failure to
    raise, or None when huggingface_hub may retry (a refused or reset connection, first try).

    A timeout and a TLS error are final at once; the others are recorded as ``guard.problem``.
    """
    import httpx2

    if isinstance(exc, httpx2.TimeoutException):
        return guard.give_up(f"{host} did not answer within {guard.timeout:g} s")
    if _is_tls(exc):
        return guard.give_up(f"TLS error talking to {host} ({first_line(exc)})")
    if isinstance(exc, httpx2.ConnectError):
        guard.problem = f"cannot connect to {host} ({first_line(exc)})"
    else:
        guard.problem = f"the connection to {host} was reset ({first_line(exc)})"
    return guard.give_up(guard.problem) if attempt >= MAX_ATTEMPTS else None


def _deadline_body(
    stream: Iterable[bytes], start: float, host: str, guard: HubGuard
) -> httpx2.SyncByteStream:
    """``stream`` (a response body) failing with the guard's final failure once the request
    started at ``start`` is past its deadline, or when the connection breaks."""
    import httpx2

    class DeadlineStream(httpx2.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            late = f"{host} did not finish answering within {guard.timeout:g} s"
            try:
                for chunk in stream:
                    if time.monotonic() - start > guard.timeout:
                        raise guard.give_up(late)
                    yield chunk
            except httpx2.TimeoutException:
                raise guard.give_up(late) from None
            except (httpx2.NetworkError, httpx2.RemoteProtocolError) as exc:
                raise guard.give_up(f"the connection to {host} broke ({first_line(exc)})") from None

        def close(self) -> None:
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    return DeadlineStream()


def _send(inner: httpx2.BaseTransport, request: httpx2.Request, guard: HubGuard) -> httpx2.Response:
    """One attempt of ``request`` through ``inner``, under ``guard``.

    Raises:
        HubGiveUp: a final failure (now or earlier in this stretch of requests).
        httpx2.HTTPError: a failure huggingface_hub may retry (first attempt).
    """
    import httpx2

    if guard.failure:
        raise HubGiveUp(guard.failure)
    host, attempt, start = _begin_attempt(request, guard)
    try:
        response = inner.handle_request(request)
    except (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError) as exc:
        final = _attempt_failed(exc, host, attempt, guard)
        if final is not None:
            raise final from None
        raise
    if response.status_code >= 500 or response.status_code == 429:
        guard.problem = f"{host} answered HTTP {response.status_code}"
        if attempt >= MAX_ATTEMPTS:
            response.close()
            raise guard.give_up(guard.problem)
    body = cast("Iterable[bytes]", response.stream)  # a sync transport answers a sync body
    response.stream = _deadline_body(body, start, host, guard)
    return response


def _guard_transport(inner: httpx2.BaseTransport, guard: HubGuard) -> httpx2.BaseTransport:
    """Wrap an ``httpx2`` transport so each request obeys ``guard`` (see the module docstring)."""
    import httpx2

    pool = getattr(inner, "_pool", None)  # httpx2.HTTPTransport's httpcore2 connection pool
    if pool is not None and getattr(pool, "_network_backend", None) is not None:
        pool._network_backend = _DeadlineBackend(pool._network_backend)

    class GuardTransport(httpx2.BaseTransport):
        def __init__(self, wrapped: httpx2.BaseTransport):
            self.wrapped = wrapped

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            return _send(self.wrapped, request, guard)

        def close(self) -> None:
            self.wrapped.close()

    return GuardTransport(inner)


@contextmanager
def hub_requests(timeout: float | None = None) -> Iterator[HubGuard]:
    """Bound every huggingface_hub request made inside the block (see the module docstring)
    to ``timeout`` seconds each (None: :data:`~recipecli.checkpoint.hub_timeout.DEFAULT_TIMEOUT_S`).

    Wraps the transports of the client that huggingface_hub's current client factory builds
    (keeping the user's proxies and certificates, and the tests' mock transport); restores the
    factory afterwards.

    Yields:
        the guard, whose ``reason()`` says what failed (None when nothing did).
    """
    import httpx2
    from huggingface_hub.utils import _http

    guard = HubGuard(DEFAULT_TIMEOUT_S if timeout is None else timeout)
    previous = getattr(_http, "_GLOBAL_CLIENT_FACTORY", _http.default_client_factory)

    def factory() -> httpx2.Client:
        client = previous()
        transport = getattr(client, "_transport", None)
        mounts = getattr(client, "_mounts", None)
        if transport is None or not isinstance(mounts, dict):  # an httpx2 we do not know
            client.close()
            return httpx2.Client(
                transport=_guard_transport(httpx2.HTTPTransport(), guard),
                event_hooks={"request": [_http.hf_request_event_hook]},
                follow_redirects=True,
            )
        client._transport = _guard_transport(transport, guard)
        for pattern, mounted in list(mounts.items()):
            if mounted is not None:
                mounts[pattern] = _guard_transport(mounted, guard)
        return client

    _http.set_client_factory(factory)
    try:
        yield guard
    finally:
        _http.set_client_factory(previous)
