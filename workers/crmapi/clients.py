"""Each CRM's read-back client, found by the dotted path its registry line names (a
vendor's client.py), sharing the token pauses."""

import importlib

from workers.sources.registry import READ_BACK, SOURCES


def _class(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


CLIENTS = {name: _class(SOURCES[name].client) for name in READ_BACK}  # by source name, from the registry


def clients(settings, pauses=None) -> dict:
    """Each CRM source's client, sharing the token pauses."""
    return {name: client(settings, pauses) for name, client in CLIENTS.items()}
