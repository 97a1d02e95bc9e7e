"""The registry of webhook sources. Adding a form tool: one module, one line here.

Each source module exposes `NAME`, `verify(body, headers, secrets)`, `parse(body)`
and `dedupe_key(item)`.
"""

from . import meta

SOURCES = {
    meta.NAME: meta,
}
