"""leadrelay's core and engine: everything but HTTP. It never imports `webhook_app` (the
HTTP edge, the only place Flask lives); a test holds it to that.

The data path, top to bottom:

    receiving (called by webhook_app, and by the CLI's import-stages and reconcile)
      sources/        the registry: each source's kind, secret setting, verify, parse,
                      lead key and job; one module per source (meta, typeform, tally)
      errors.py       what a delivery can be refused for (reason, status)
      intake.py       verify, parse, route, prepare, dedupe and store durably; what is not sent
      inbox.py        the inbox stream: one atomic write per delivery, drain slots, take, reclaim
      routing.py      datasets, Pages, per-form datasets, API clients: where each lead goes
                      (routesfile.py: read and checked from the mapping file)
      forms.py        form answers to match keys (mappingfile.py: the mapping file)
      stages.py       CRM/sheet stage changes checked and queued (stagemap.py: names)

    identifying people
      matchkeys.py    the one match-key table; Lead Ads answers read by it
      userdata.py     normalise and hash each key (phones, places, birthdates)
      browserids.py   click and browser ids from hidden fields
      profiles.py     what later stage events need to find a lead again

    sending, in RQ workers
      batches.py      drain jobs: new leads in batches (batchsteps.py: one batch's steps;
                      leadevents.py: a lead's profile and Lead event; handoff.py: a lead a
                      batch could not finish gets its own job, a failed batch one job)
      jobs.py         the job functions, on one skeleton; work.py: what a job works on
      attempts.py     one attempt: retry, wait for a token, or dead-letter (policy.py decides)
      events.py       event names, ids, the 7-day window; ldu.py: Limited Data Use
      graph.py        the Graph client; capi.py: send, the ledger, dry-run; deliveries.py: stage batches
      pauses.py       tokens parked after an auth failure
      sweep.py        the scheduled read of every form's leads; accuracy.py: what reached Meta

    what failed, and keeping it tidy
      deadletters.py  the store and its filters; replay.py; retention.py; recovery.py

    running and configuring
      settings.py     read once, passed down (required.py: what each process needs)
      environment.py  .env and the sandbox's settings (sandbox.py); logs.py; counters.py
      queues.py       Redis connections, the queue, Redis key names; times.py: time parsing
      runner.py       `leadrelay run` and the worker; embedded_redis.py; standin*.py
      cli/            the `leadrelay` command; doctor.py, reconcile.py, sendtest.py behind it
"""
