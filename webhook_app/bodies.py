"""Request bodies read whole before the app sees them: within the size limit, and within
the body timeout.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

import io
import json

from workers.common import logs
from workers.sources.ids import unsigned

from . import greenlets

log = logs.get(__name__)
_NO_BODY = ("GET", "HEAD", "OPTIONS", "DELETE")
BODY = "leadrelay.body"  # the environ's key for the body read whole


class BodyTimedOut(Exception):
    pass


class WholeBodies:
    """WSGI middleware; `limit` in bytes, `timeout` in seconds."""

    def __init__(self, app, limit: int, timeout: float):
        self.app, self.limit, self.timeout = app, limit, timeout

    def __call__(self, environ, start_response):
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        length = unsigned(environ.get("CONTENT_LENGTH"), 15)  # the server checked it; strictly read all the same
        if environ.get("REQUEST_METHOD") in _NO_BODY or not (chunked or length):
            return self.app(environ, start_response)
        if not chunked and length > self.limit:
            return self.app(environ, start_response)  # the app's own 413, counted per source, reads nothing
        try:
            with _deadline(self.timeout):
                data = _read(environ["wsgi.input"], None if chunked else int(length), self.limit)
        except BodyTimedOut:
            log.warning(
                "body_timeout",
                path=environ.get("PATH_INFO"),
                seconds=self.timeout,
                remote_addr=environ.get("REMOTE_ADDR"),
            )
            return _refuse(
                start_response,
                "408 Request Timeout",
                "body_timeout",
                f"the body did not arrive within {self.timeout:g} s",
            )
        if data is None:
            return _refuse(
                start_response,
                "413 Request Entity Too Large",
                "body_too_large",
                f"body over the {self.limit}-byte limit",
            )
        environ[BODY] = data  # the app's webhooks read it here, not through the stream again
        environ["wsgi.input"] = io.BytesIO(data)
        environ["CONTENT_LENGTH"] = str(len(data))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        environ["wsgi.input_terminated"] = False
        return self.app(environ, start_response)


def _read(stream, length: int | None, limit: int) -> bytes | None:
    """The whole body; None when a chunked one runs past `limit`."""
    if length is not None:
        parts, left = [], length
        while left:
            part = stream.read(min(left, 65536))
            if not part:
                break  # the client closed early: the app sees what came, and says what is wrong
            parts.append(part)
            left -= len(part)
        return b"".join(parts)
    data = stream.read(limit + 1)
    return None if len(data) > limit else data


class _deadline:
    """gevent's Timeout when sockets are gevent's (the body is read cooperatively), else none."""

    def __init__(self, seconds: float):
        self.seconds, self.timer = seconds, None

    def __enter__(self):
        if greenlets.cooperative():
            from gevent import Timeout

            self.timer = Timeout(self.seconds, BodyTimedOut)
            self.timer.start()
        return self

    def __exit__(self, *exc):
        if self.timer is not None:
            self.timer.close()
        return False


def _refuse(start_response, status: str, reason: str, detail: str):
    payload = json.dumps({"error": reason, "detail": detail}).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(payload))), ("Connection", "close")]
    )
    return [payload]
