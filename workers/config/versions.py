"""The Graph API version's horizon: when Meta stops serving the configured version.

Notes: docs/internals/config.md
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from workers.common import logs

WARN_DAYS = 90

# version: (Graph API ends, Marketing API ends); None: not announced yet. From Meta's tables
# as they stood on 2026-11-26: https://developers.facebook.com/docs/graph-api/changelog/versions/
# and https://developers.facebook.com/docs/marketing-api/marketing-api-changelog/versions
# (v24.0 now ends 2026-11-10, not 2026-10-06; v25.0 ends 2027-02-23; v27.0 shipped 2026-11-04).
# The table is not the only source: Meta's own signals that a call ran on an ending version
# (error #2635, the X-Ad-Api-Version-Warning header) are read on every answer (graph.py).
ENDS: dict[tuple[int, int], tuple[date | None, date | None]] = {
    (27, 0): (None, None),
    (26, 0): (None, None),
    (25, 0): (date(2028, 7, 29), date(2027, 2, 23)),
    (24, 0): (date(2028, 2, 18), date(2026, 11, 10)),
    (23, 0): (date(2027, 10, 8), date(2026, 6, 9)),
    (22, 0): (date(2027, 5, 20), date(2026, 2, 19)),
    (21, 0): (date(2027, 1, 21), date(2025, 9, 9)),
    (20, 0): (date(2026, 9, 24), date(2025, 5, 6)),
}
log = logs.get(__name__)
OLDEST_KNOWN = min(ENDS)
NEWEST_KNOWN = max(ENDS)


@dataclass(frozen=True)
class Horizon:
    version: str
    ends: date | None  # None: no end announced (or newer than this table)
    days_left: int | None
    which: str  # the API whose end comes first: "Graph API" or "Marketing API"

    @property
    def ended(self) -> bool:
        return self.days_left is not None and self.days_left < 0

    @property
    def warn(self) -> bool:
        return self.days_left is not None and self.days_left <= WARN_DAYS

    def say(self) -> str:
        if self.ends is None:
            return f"{self.version}: " + ("older than every version Meta serves" if self.ended else "no end announced")
        if self.ended:
            return f"{self.version}: Meta stopped serving it on {self.ends} ({self.which})"
        return f"{self.version}: served until {self.ends} ({self.which}), {self.days_left} days left"


def horizon(version: str, today: date | None = None) -> Horizon:
    today = today or date.today()
    found = re.findall(r"\d+", version)
    numbers = (int(found[0]), 0) if found else (0, 0)  # Meta ships vN.0 only
    if numbers > NEWEST_KNOWN:
        return Horizon(version, None, None, "")
    if numbers < OLDEST_KNOWN:
        return Horizon(version, None, -1, "Graph API")
    graph, marketing = ENDS[numbers]
    known = [(end, which) for end, which in ((graph, "Graph API"), (marketing, "Marketing API")) if end]
    if not known:
        return Horizon(version, None, None, "")
    ends, which = min(known)
    return Horizon(version, ends, (ends - today).days, which)


def warn_at_start(version: str, process: str) -> Horizon:
    """Say it at start when the configured version ends within WARN_DAYS, or has ended."""
    found = horizon(version)
    if found.warn:
        log.warning(
            "api_version_retiring",
            process=process,
            detail=found.say() + ": set META_API_VERSION to a current version (`leadrelay doctor` says which)",
        )
    return found
