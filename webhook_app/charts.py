"""The admin page's small accuracy chart, drawn on the server as SVG shapes: per Page, per
day of the last 7, three bars (received by webhook, recovered by the sweep, confirmed by
Meta). No script and no outside resource, as the page's Content-Security-Policy wants."""

from __future__ import annotations

SERIES = ("webhook", "recovered", "confirmed")
COLOURS = {"webhook": "#4a7bd0", "recovered": "#e0a030", "confirmed": "#3a9a5a"}
HEIGHT, BAR, GAP, DAY_GAP, LABELS = 80, 8, 1, 10, 14


def page_charts(rows: list[dict]) -> list[dict]:
    """One chart per Page: its forms' days added up, as bars with a title each."""
    pages: dict[str, list[dict]] = {}
    for row in rows:
        days = pages.setdefault(row["page_id"], [{"day": d["day"], **dict.fromkeys(SERIES, 0)} for d in row["days"]])
        for total, day in zip(days, row["days"]):
            for series in SERIES:
                total[series] += day[series]
    return [_chart(page, days) for page, days in sorted(pages.items())]


def _chart(page_id: str, days: list[dict]) -> dict:
    top = max([1] + [d[s] for d in days for s in SERIES])
    step = len(SERIES) * (BAR + GAP) + DAY_GAP
    bars, labels = [], []
    for i, day in enumerate(days):
        left = i * step
        for j, series in enumerate(SERIES):
            h = round(day[series] / top * HEIGHT, 1)
            bars.append(
                {
                    "x": left + j * (BAR + GAP),
                    "y": round(HEIGHT - h, 1),
                    "w": BAR,
                    "h": h,
                    "fill": COLOURS[series],
                    "series": series,
                    "day": day["day"],
                    "title": f"{day['day']}: {day[series]} {series}",
                }
            )
        labels.append({"x": left, "text": day["day"][5:]})
    return {
        "page_id": page_id,
        "width": len(days) * step,
        "height": HEIGHT + LABELS,
        "bars": bars,
        "labels": labels,
        "top": top,
    }
