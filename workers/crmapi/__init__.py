"""Reading people back from the CRMs whose pushes carry ids only (HubSpot, Pipedrive: the
registry's `client` lines),
with the CRM's own token. A CRM read fails like a Graph read and is treated the same:
classified retries, a refused token paused (jobs wait, the admin page names it), dead
letters with the call that failed. Imports graphapi (the token pauses) and below."""

import importlib

from workers.sources import READ_BACK, SOURCES


def _class(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


CLIENTS = {name: _class(SOURCES[name].client) for name in READ_BACK}  # by source name, from the registry


def clients(settings, pauses=None) -> dict:
    """Each CRM source's client, sharing the token pauses."""
    return {name: client(settings, pauses) for name, client in CLIENTS.items()}
