"""The registry of webhook sources. Adding a form tool: one module, one line here.

Each source module exposes `NAME`, `verify(body, headers, secrets)`, `parse(body)`
and `dedupe_key(item)`.
"""

from . import meta, tally, typeform

SOURCES = {
    meta.NAME: meta,
    typeform.NAME: typeform,
    tally.NAME: tally,
}
# Sources whose submissions are mapped and hashed on arrival (workers.forms).
FORM_SOURCES = {typeform.NAME, tally.NAME}
