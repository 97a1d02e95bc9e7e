"""leadrelay's core and engine: everything but HTTP. It never imports `webhook_app` (the
HTTP edge, the only place Flask lives).

Each folder imports only the folders below it (tests/feature/test_layout.py holds the
table; docs/design.md#layout says what each module holds):

    cli/        the `leadrelay` command, thin
    run/        the processes: worker, `leadrelay run`, web server, embedded Redis, doctor
    jobs.py     every RQ entry point, at paths that never move (jobnames.py: their names)
    sweep/      the scheduled re-read of Meta's lead lists, and the token watch
    engine/     the drain, single jobs' attempts, hand-offs, sending, recovery
    privacy/    one person's records found, exported, forgotten; every record's retention; the audit trail
    failures/   dead letters, replay, retention
    intake/     what runs inside the web request: receive, inbox, forms, stage items
    graphapi/   the Graph client, the Conversions API sender, token pauses, version signals
    crmapi/     the CRMs' read-back APIs (beside graphapi: the same layer)
    googleapi/  Google's Data Manager API, Google as a destination (beside graphapi)
    reports/    read sides of what jobs write (readiness, the watch's findings): the web loads these
    events/     event names and ids, the 7-day window, profiles, the confirmed ledger, accuracy, the funnel
    config/     settings, the mapping file, routing, stage names, the sandbox's settings
    sources/    the registry and the core sources' modules (names jobs, never imports them)
    vendors/    one folder per vendor (the registry names them), a module per role,
                each at its role's layer: webhook (sources), client (crmapi), standin, samples (run)
    standin/    the sandbox's Graph stand-in, loaded lazily
    common/     refusals, Meta's error policy, Redis keys, logs, times, the clock, counters
    identity/   match keys, normalisation and hashing: pure
"""
