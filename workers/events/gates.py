"""Meta's Conversion Leads gates, judged on a dataset's figures (funnel.py): each with the
figure, the threshold, pass or fail, and what to do when it fails.

Notes: docs/internals/events.md
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from workers.events import accuracy, conversions, funnel


@dataclass(frozen=True)
class Gate:
    name: str  # a stable id: series labels, --json
    title: str
    value: float | None  # the figure as a number (series); None: nothing to judge yet
    figure: str  # the figure as a person reads it
    threshold: str
    passed: bool
    fix: str | None  # what to do, when it fails

    def as_dict(self) -> dict:
        return asdict(self)


def judge(
    figures: funnel.Figures, coverage: tuple[int, int] | None, now: float, daily: dict | None = None
) -> list[Gate]:
    """Every gate for one dataset; `coverage` is (confirmed, known) Lead Ads leads of the
    accuracy window (None: no Lead Ads lead known there); `daily`, the same per day."""
    return [
        _leads(figures),
        _coverage(coverage),
        _worst_day(daily or {}, now),
        _stages(figures),
        _optimisation(figures),
        _upload(figures, now),
        _crm_days(figures),
    ]


def _leads(figures: funnel.Figures) -> Gate:
    return Gate(
        "leads_30d",
        "Lead Ads leads, last 30 days",
        figures.leads,
        str(figures.leads),
        f">= {funnel.MIN_LEADS}",
        figures.leads >= funnel.MIN_LEADS,
        None
        if figures.leads >= funnel.MIN_LEADS
        else "Meta optimises for a stage from about 200 leads a month on one dataset: raise the "
        "campaign's budget, or route the forms of one funnel to one dataset (docs/configuration.md)",
    )


def _coverage(coverage: tuple[int, int] | None) -> Gate:
    done, known = coverage or (0, 0)
    share = done / known if known else None
    passed = share is not None and share >= funnel.MIN_COVERAGE
    return Gate(
        "lead_coverage",
        "Lead Coverage, last 7 days",
        round(share, 4) if share is not None else None,
        f"{share:.1%} ({done} of {known})" if share is not None else "no Lead Ads lead known",
        f">= {funnel.MIN_COVERAGE:.0%}",
        passed,
        None
        if passed
        else "leads Meta holds reached it without their Lead event: `leadrelay accuracy` shows where they "
        "stopped, `leadrelay dead-letters list` what failed (replay it), and a webhook_silent Page needs "
        "`leadrelay subscribe`",
    )


def _stages(figures: funnel.Figures) -> Gate:
    seen = figures.stages_seen
    passed = conversions.LEAD in seen and len(seen) >= 2
    return Gate(
        "funnel_stages",
        "Funnel stages sent, last 28 days",
        len(seen),
        ", ".join(seen) or "none",
        ">= 2, including Lead (3 or more recommended)",
        passed,
        None
        if passed
        else "send the raw lead (Lead) and at least one later stage for Lead Ads leads: map your CRM's "
        "stages (docs/stages.md) or post them to /api/v1/stage-events",
    )


def _optimisation(figures: funnel.Figures) -> Gate:
    fitting = [s for s in figures.stages if s.in_range]
    best = max(fitting or figures.stages, key=lambda s: (s.in_range, s.reached), default=None)
    return Gate(
        "optimisation_stage",
        "A stage 1-40% of leads reach within 28 days",
        best.share if best else None,
        f"{best.event_name} {best.share:.1%}" if best and best.share is not None else "no stage reached",
        "1% to 40%",
        bool(fitting),
        None
        if fitting
        else "optimise for a stage between the raw lead and the sale: under 1% is too rare for Meta to "
        "learn from, over 40% tells it little more than Lead; send the stage in between (QualifiedLead, "
        "Schedule)",
    )


def _upload(figures: funnel.Figures, now: float) -> Gate:
    hours = (now - figures.last_upload) / 3600 if figures.last_upload else None
    passed = hours is not None and hours <= funnel.UPLOAD_HOURS
    return Gate(
        "daily_upload",
        "Last upload",
        round(hours * 3600) if hours is not None else None,
        _ago(hours) if hours is not None else "never",
        f"within {funnel.UPLOAD_HOURS} h",
        passed,
        None
        if passed
        else "Meta wants uploads at least daily: check that a worker runs (`leadrelay doctor`, the admin "
        "page's queue) and that leads still arrive",
    )


def _worst_day(daily: dict[str, tuple[int, int]], now: float) -> Gate:
    """Meta's implementation guide: "100 leads, 100 raw Lead events": every lead of a day
    has its Lead event. Judged on the days before today (today's leads may still be on
    their way); the worst day is shown."""
    today = accuracy.day(now)
    shares = {day: (done, known) for day, (done, known) in daily.items() if known and day < today}
    if not shares:
        return Gate(
            "daily_lead_events",
            "Leads of each day with their Lead event",
            None,
            "no past day yet",
            "every lead, every day",
            False,
            "wait for a day of Lead Ads leads to pass",
        )
    day, (done, known) = min(shares.items(), key=lambda item: (item[1][0] / item[1][1], item[0]))
    passed = done >= known
    return Gate(
        "daily_lead_events",
        "Leads of each day with their Lead event (worst day)",
        round(done / known, 4),
        f"{day}: {done} of {known}",
        "every lead, every day",
        passed,
        None
        if passed
        else f"on {day} {known - done} lead(s) Meta holds have no Lead event: `leadrelay accuracy` says which "
        "never came by webhook (`leadrelay sweep` sends those within the 7 days; `leadrelay doctor --page-id` "
        "says why the webhook did not come) and `leadrelay dead-letters list` which failed (replay them)",
    )


# Meta's Conversion Leads FAQ: at least seven days of CRM events (not necessarily in a row).
MIN_CRM_DAYS = 7


def _crm_days(figures: funnel.Figures) -> Gate:
    days = sum(1 for _, _, stages in figures.by_day if stages)
    passed = days >= MIN_CRM_DAYS
    return Gate(
        "crm_days",
        "Days with CRM events, last 30",
        days,
        str(days),
        f">= {MIN_CRM_DAYS} (not necessarily in a row)",
        passed,
        None
        if passed
        else "Meta asks for at least seven days with CRM events before it trains: keep the CRM sending "
        "its stage changes (a silent CRM is flagged below)",
    )


def _ago(hours: float) -> str:
    if hours < 1:
        return f"{max(0, round(hours * 60))} min ago"
    return f"{hours:.1f} h ago" if hours < 48 else f"{hours / 24:.1f} days ago"
