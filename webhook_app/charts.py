"""The admin page's small charts, drawn on the server as SVG shapes: bars per day, a few series
side by side.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

SERIES = ("webhook", "recovered", "confirmed", "kept")
FUNNEL = ("leads", "stage_events")
COLOURS = {
    "webhook": "#4a7bd0",
    "recovered": "#e0a030",
    "confirmed": "#3a9a5a",
    "kept": "#98a2b3",
    "leads": "#4a7bd0",
    "stage_events": "#3a9a5a",
}
HEIGHT, BAR, GAP, DAY_GAP, LABELS = 80, 8, 1, 10, 14


def page_charts(rows: list[dict]) -> list[dict]:
    """One chart per Page: its forms' days added up, as bars with a title each."""
    pages: dict[str, list[dict]] = {}
    for row in rows:
        days = pages.setdefault(row["page_id"], [{"day": d["day"], **dict.fromkeys(SERIES, 0)} for d in row["days"]])
        for total, day in zip(days, row["days"]):
            for series in SERIES:
                total[series] += day[series]
    return [{"page_id": page, **bars(days, SERIES)} for page, days in sorted(pages.items())]


def funnel_charts(datasets: list[dict]) -> list[dict]:
    """One chart per dataset of the readiness report: its 30 days, leads and stage events."""
    return [{"dataset": d["dataset"], **bars(d["by_day"], FUNNEL, bar=4, day_gap=3, label_every=5)} for d in datasets]


def bars(days: list[dict], series: tuple[str, ...], bar=BAR, day_gap=DAY_GAP, label_every=1) -> dict:
    """Days (dicts with `day` and a figure per series) as positioned bars and labels."""
    top = max([1] + [d[s] for d in days for s in series])
    step = len(series) * (bar + GAP) + day_gap
    shapes, labels = [], []
    for i, day in enumerate(days):
        left = i * step
        for j, name in enumerate(series):
            h = round(day[name] / top * HEIGHT, 1)
            shapes.append(
                {
                    "x": left + j * (bar + GAP),
                    "y": round(HEIGHT - h, 1),
                    "w": bar,
                    "h": h,
                    "fill": COLOURS[name],
                    "series": name,
                    "day": day["day"],
                    "title": f"{day['day']}: {day[name]} {name.replace('_', ' ')}",
                }
            )
        if i % label_every == 0:
            labels.append({"x": left, "text": day["day"][5:]})
    return {"width": len(days) * step, "height": HEIGHT + LABELS, "bars": shapes, "labels": labels, "top": top}
