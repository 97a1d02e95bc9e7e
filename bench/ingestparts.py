"""Where a webhook's CPU goes: leadrelay's receiver step by step, beside the held
reference's (bench/limit_app.py: bare Flask, a signature, a JSON parse, one SET NX EX on
a held socket), measured in one process under gevent as gunicorn's workers run them.

bench/ingest.py measures the whole: requests/s under load, and CPU per request. This
script says which steps make the difference. Whole requests go through each app's WSGI
callable with the environ gunicorn gives it, without the server (gunicorn's parsing and
socket writes cost both alike). Each round times the reference, leadrelay, and leadrelay
with one step stubbed out, for each step in turn; a step's cost is the median over the
rounds of (leadrelay - leadrelay without it), printed with its spread, since on a shared
machine a single difference can be off by more than the step. Last, a few steps timed
alone, caches hot: a lower bound of what they cost in a request.

    .venv/bin/python bench/ingestparts.py [--calls 500] [--rounds 12]
"""

from gevent import monkey

monkey.patch_all()  # as gunicorn's gevent workers do: sockets, locks and sleeps are gevent's

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import io  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import ingest  # noqa: E402

from workers.run.embedded_redis import EmbeddedRedis  # noqa: E402


def cpu_us(step, calls: int, runs: int = 5) -> float:
    """CPU microseconds per call of `step(i)`, the best of `runs` runs of `calls` calls."""
    best = float("inf")
    for run in range(runs):
        started = time.process_time()
        for i in range(calls):
            step(run * calls + i)
        best = min(best, (time.process_time() - started) / calls * 1e6)
    return best


def wsgi_call(app, body: bytes, headers: dict) -> None:
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/webhooks/meta",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/json",
        "HTTP_X_HUB_SIGNATURE_256": headers["X-Hub-Signature-256"],
    }
    status = []
    answer = app(environ, lambda line, headers, exc_info=None: status.append(line))
    b"".join(answer)
    getattr(answer, "close", lambda: None)()
    if not status[0].startswith("200"):
        raise SystemExit(f"the request was answered {status[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    n = args.calls
    with (
        tempfile.TemporaryDirectory() as tmp,
        EmbeddedRedis(Path(tmp) / "redis") as redis_server,
        open(os.devnull, "w") as nowhere,
        contextlib.redirect_stderr(nowhere),  # the log lines are written, as in production, to nothing here
    ):
        os.environ.update(
            REDIS_URL=redis_server.url,
            META_APP_SECRET=ingest.SECRET,
            META_VERIFY_TOKEN="v",
            LEADRELAY_DATA_DIR=tmp,
            PROMETHEUS_MULTIPROC_DIR=tempfile.mkdtemp(dir=tmp),
        )
        import limit_app
        from flask import Response

        import webhook_app
        from webhook_app import deliveries, webhooks
        from workers.intake import admission, inbox, kinds, receiver, requestredis
        from workers.sources.registry import SOURCES

        app, held = webhook_app.create_app(), limit_app.create_held_app()
        gc.freeze()  # as gunicorn_conf's post_worker_init does: collections skip what was loaded
        ext = app.extensions["leadrelay"]
        mapping = {key: ext[key] for key in ("forms", "processing", "routes", "crm")}
        meta, settings, request_redis = SOURCES["meta"], ext["settings"], ext["request_redis"]
        leads = (ingest.signed_lead(0, i) for i in itertools.count())  # every lead new, as in bench/ingest.py
        body, headers = ingest.signed_lead(0, 0)
        parsed = meta.parse(body, headers)
        jobs, _ = kinds.lead_jobs(meta, parsed["leads"], mapping["routes"], None)
        argument = jobs[0][1]
        ids = (f"lead-meta-{i}" for i in itertools.count(10**9))

        def admit(i):
            job = next(ids)
            entry = inbox.entry(job, meta.job, argument, "request-id", "webhook")
            checks = [admission._suppression_fields(argument)]
            inbox.admit(request_redis, [(job, entry)], inbox.SLOTS, suppressions=checks)

        def without(step: str):
            """The whole request with one step taken out (a stub in its place), to see what
            it costs in the request: timed alone, every step costs about a third of that,
            its code and data hot in the CPU's caches as they never are in a request."""
            undo = []

            def swap(owner, name, value):
                undo.append((owner, name, getattr(owner, name)))
                setattr(owner, name, value)

            if step == "its log line and counts (deliveries.note)":
                swap(deliveries, "note", lambda *args: None)
            elif step == "the yield before the Redis call":
                swap(requestredis, "time", _NoSleep())
            elif step == "the answer (jsonify)":
                swap(webhooks, "jsonify", lambda **fields: Response(b'{"accepted":1}', mimetype="application/json"))
            elif step == "the body middleware":
                swap(app, "wsgi_app", app.wsgi_app.app)
            elif step == "the replica check":
                swap(kinds, "replicated", lambda connection: None)
            return undo

        steps = [
            "its log line and counts (deliveries.note)",
            "the yield before the Redis call",
            "the answer (jsonify)",
            "the body middleware",
            "the replica check",
        ]
        runs: dict[str, list[float]] = {name: [] for name in ["held reference", "leadrelay", *steps]}
        for _ in range(args.rounds):  # short runs interleaved, so drift on the machine hits all alike
            runs["held reference"].append(cpu_us(lambda i: wsgi_call(held, *next(leads)), n, 1))
            runs["leadrelay"].append(cpu_us(lambda i: wsgi_call(app, *next(leads)), n, 1))
            for step in steps:
                undo = without(step)
                try:
                    runs[step].append(cpu_us(lambda i: wsgi_call(app, *next(leads)), n, 1))
                finally:
                    for owner, name, value in reversed(undo):
                        setattr(owner, name, value)
        alone = {
            "signature": cpu_us(lambda i: receiver._verify(meta, body, headers, settings, mapping["routes"]), n),
            "parse": cpu_us(lambda i: meta.parse(body, headers), n),
            "admit round trip (with its yield)": cpu_us(admit, n),
            "the reference's SET NX EX, same socket": cpu_us(
                lambda i: request_redis.execute_command("SET", f"k{i}", body, "NX", "EX", 60), n
            ),
        }

    best = {name: min(values) for name, values in runs.items()}
    reference, whole = best["held reference"], best["leadrelay"]
    print(
        f"CPU per webhook request, one process under gevent, best of {args.rounds} interleaved runs "
        f"of {n} calls (microseconds)"
    )
    print(f"  held reference (bare Flask, signature, parse, SET NX EX)   {reference:7.1f}")
    print(f"  leadrelay as shipped (INFO logs, metrics on)              {whole:7.1f}   {whole / reference:.2f}x")
    print("what each step costs in leadrelay's request: the request with it minus without it, paired run by run")
    print(f"  {'step':<46} {'median':>7} {'(min .. max)':>18}")
    saved = {}
    for step in steps:
        paired = sorted(w - o for w, o in zip(runs["leadrelay"], runs[step]))
        saved[step] = statistics.median(paired)
        print(f"  {step:<46} {saved[step]:7.1f}   ({paired[0]:+.0f} .. {paired[-1]:+.0f})")
    print("  (a spread wider than the median is this machine's noise, not the step)")
    print("timed alone (caches hot; about a third of what they cost in a request):")
    for name, cost in alone.items():
        print(f"  {name:<48} {cost:7.1f}")
    figures = {"best_us": best, "step_median_us": saved, "alone_us": alone}
    print(json.dumps({key: {k: round(v, 1) for k, v in values.items()} for key, values in figures.items()}))


class _NoSleep:
    @staticmethod
    def sleep(seconds):
        pass


if __name__ == "__main__":
    main()
