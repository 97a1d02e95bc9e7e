"""Structured JSON logs, one event per line, for the web and worker processes.

Callers log ids, outcomes and reasons, never raw emails, phones, names or tokens.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure(level: str = "INFO") -> None:
    """Route structlog and the standard library (gunicorn, rq) to JSON on stderr."""
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    shared = [structlog.contextvars.merge_contextvars, structlog.processors.add_log_level, timestamper]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def get(name: str):
    return structlog.get_logger(name)
