"""Reading people back from the CRMs whose pushes carry ids only, with the CRM's own token
(the registry's `client` lines; each vendor's client.py). A CRM read fails like a Graph
read and is treated the same: classified retries, a refused token paused, dead letters
with the call that failed. http.py is what every client shares; clients.py finds them.
This file imports nothing: a vendor's client imports http.py without running clients.py."""
