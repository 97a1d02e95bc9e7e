"""Structured JSON logs, one event per line on stderr, for the web and worker processes.

Notes: docs/internals/common.md
"""

from __future__ import annotations

import logging
import sys
import traceback

import structlog

_SHARED = [
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


class _Stderr:
    """Whatever sys.stderr is when a line is written, not when logging was configured
    (a test's captured stream, or gunicorn's after it redirects)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(level: str = "INFO") -> None:
    structlog.configure(
        processors=[*_SHARED, structlog.processors.format_exc_info, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        logger_factory=structlog.WriteLoggerFactory(_Stderr()),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=_SHARED,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def where(err: BaseException) -> list[str]:
    """The frames an exception passed through, as `file:line function`: a traceback to
    log without the exception's message or any value, which may be a raw email."""
    return [
        f"{frame.filename.rsplit('/', 2)[-1]}:{frame.lineno} {frame.name}"
        for frame in traceback.extract_tb(err.__traceback__)
    ][-8:]


def get(name: str):
    return structlog.get_logger(logger_name=name)
