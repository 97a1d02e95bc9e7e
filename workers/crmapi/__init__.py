"""Reading people back from the CRMs whose pushes carry ids only (HubSpot, Pipedrive),
with the CRM's own token. A CRM read fails like a Graph read and is treated the same:
classified retries, a refused token paused (jobs wait, the admin page names it), dead
letters with the call that failed. Imports graphapi (the token pauses) and below."""

from workers.crmapi.hubspot import HubSpot
from workers.crmapi.pipedrive import Pipedrive

CLIENTS = {"hubspot": HubSpot, "pipedrive": Pipedrive}  # by source name (workers/sources)


def clients(settings, pauses=None) -> dict:
    """Each CRM source's client, sharing the token pauses."""
    return {name: client(settings, pauses) for name, client in CLIENTS.items()}
