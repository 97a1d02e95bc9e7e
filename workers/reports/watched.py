"""What the scheduled watch (sweep/watch.py) last found, read back: tokens ending or refused,
Pages unreachable or unsubscribed, a dataset changed after setup, each with its fix.

Notes: docs/internals/reports.md
"""

from __future__ import annotations

import json

from workers.common.queues import redis_key

READS = "leads_retrieval"  # the grant whose target_ids are the Pages a token may read leads of
STATE = redis_key("watch")
CHANGE_SHOWN_DAYS = 30  # then the new dataset is the setup: training restarted on it long ago


def problems(found: dict) -> list[dict]:
    """What needs a person, each with the fix."""
    out = []
    for token in found.get("tokens", []):
        if token.get("valid") is False:
            out.append(
                {
                    "event": "token_invalid",
                    "what": f"token:{token['token']}",
                    "token": token["token"],
                    "fix": f"Meta no longer takes it: issue a new (system-user) token and set {token['token']}",
                }
            )
        elif token.get("warn"):
            out.append(
                {
                    "event": "token_expiring",
                    "what": f"token:{token['token']}",
                    "token": token["token"],
                    "days_left": token["days_left"],
                    "fix": f"issue a system-user token (it never expires) and set {token['token']}",
                }
            )
    for page in found.get("pages", []):
        if page.get("reached") is False:
            out.append(
                {
                    "event": "page_unreachable",
                    "what": f"page:{page['page']}:token",
                    "page": page["page"],
                    "token": page["token"],
                    "fix": f"{page['token']} is not granted {READS} on this Page: give the system user (or the "
                    f"person who issued it) access to the Page and issue it again, or name the Page's own token "
                    f"in the mapping file (token_env)",
                }
            )
        if page.get("subscribed") is False:
            out.append(
                {
                    "event": "page_unsubscribed",
                    "what": f"page:{page['page']}",
                    "page": page["page"],
                    "fix": f"`{page['fix']}`: the Page sends no leadgen webhooks",
                }
            )
    for change in found.get("dataset_changes", []):
        which = "every Page" if change["page"] == "*" else f"Page {change['page']}"
        out.append(
            {
                "event": "dataset_changed",
                "what": f"page:{change['page']}:dataset",
                "page": change["page"],
                "fix": f"{which}'s leads now go to dataset {change['now']}, not {change['first']} as at setup: Meta "
                f"restarts Conversion Leads training when the dataset changes after setup; go back to "
                f"{change['first']} unless the move was meant (this is shown for {CHANGE_SHOWN_DAYS} days)",
            }
        )
    return out


def read(connection) -> dict | None:
    raw = connection.get(STATE)
    return json.loads(raw) if raw else None
