"""Where a webhook's CPU goes: leadrelay's receiver step by step, beside the held
reference's (bench/limit_app.py: bare Flask, a signature, a JSON parse, one SET NX EX on
a held socket), measured in one process under gevent as gunicorn's workers run them.
Each step's CPU is read in the request itself (a thread CPU clock around it, what it calls
taken apart), so the steps add up to the request.

bench/ingest.py measures the whole: requests/s under load, and CPU per request. This
script says which steps make the difference. Whole requests go through each app's WSGI
callable with the environ gunicorn gives it, without the server (gunicorn's parsing and
socket writes cost both alike). Each round times the reference and leadrelay whole, then
each again with its steps timed; a step's figure is the median over the rounds. Last, a
few steps timed alone, caches hot: a lower bound of what they cost in a request.

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

        clock = _Clock()
        spots = [  # (label, its parent, the object and attribute called in the request)
            ("flask", "whole", app.wsgi_app, "app"),
            ("view", "flask", app.view_functions, "webhooks.receive"),
            ("request id", "view", webhooks, "_request_id"),
            ("body read", "view", webhooks, "_body"),
            ("receiver", "view", receiver, "receive"),
            ("signature", "receiver", receiver, "_verify"),
            ("parse", "receiver", meta, "parse"),
            ("handler", "receiver", kinds.HANDLERS, meta.kind),
            ("routing", "handler", kinds, "lead_jobs"),
            ("enqueue", "handler", kinds, "enqueue_new"),
            ("entry JSON", "enqueue", inbox, "entry"),
            ("suppression fields", "enqueue", admission, "_suppression_fields"),
            ("admit", "enqueue", inbox, "admit"),
            ("yield", "admit", requestredis.time, "sleep"),
            ("round trip", "admit", requestredis, "_roundtrip"),
            ("ignored and replica", "handler", kinds, "_recorded"),
            ("log line and counts", "view", deliveries, "note"),
            ("answer (JSON)", "view", webhooks, "_json"),
        ]
        ref_spots = [("ref flask", "ref whole", held, "wsgi_app")]
        ref_spots += [("ref signature and parse", "ref flask", limit_app, "_signed_lead")]
        ref_spots += [("ref answer (jsonify)", "ref flask", limit_app, "jsonify")]
        per: dict[str, list[float]] = {}
        wholes: dict[str, list[float]] = {"held reference": [], "leadrelay": []}
        for _ in range(args.rounds):  # short runs interleaved, so drift on the machine hits all alike
            wholes["held reference"].append(cpu_us(lambda i: wsgi_call(held, *next(leads)), n, 1))
            wholes["leadrelay"].append(cpu_us(lambda i: wsgi_call(app, *next(leads)), n, 1))
            for name, value in clock.run(spots, "whole", lambda: wsgi_call(app, *next(leads)), n).items():
                per.setdefault(name, []).append(value)
            for name, value in clock.run(ref_spots, "ref whole", lambda: wsgi_call(held, *next(leads)), n).items():
                per.setdefault(name, []).append(value)
        alone = {
            "signature": cpu_us(lambda i: receiver._verify(meta, body, headers, settings, mapping["routes"]), n),
            "parse": cpu_us(lambda i: meta.parse(body, headers), n),
            "admit round trip (with its yield)": cpu_us(admit, n),
            "the reference's SET NX EX, same socket": cpu_us(
                lambda i: request_redis.execute_command("SET", f"k{i}", body, "NX", "EX", 60), n
            ),
        }

    best = {name: min(values) for name, values in wholes.items()}
    reference, whole = best["held reference"], best["leadrelay"]
    print(
        f"CPU per webhook request, one process under gevent, best of {args.rounds} interleaved runs "
        f"of {n} calls (microseconds)"
    )
    print(f"  held reference (bare Flask, signature, parse, SET NX EX)   {reference:7.1f}")
    print(f"  leadrelay as shipped (INFO logs, metrics on)              {whole:7.1f}   {whole / reference:.2f}x")
    print("where it goes, each step timed in the request (its own CPU, what it calls apart), median of the rounds;")
    print("the steps add up to the timed request, which the timers themselves make a little slower:")
    steps = {name: statistics.median(values) for name, values in per.items()}
    for tree, label in (("whole", "leadrelay"), ("ref whole", "held reference")):
        names = [name for name in steps if (name == tree or _root(name, spots + ref_spots) == tree)]
        print(f"  {label:<46} {steps[tree] + sum(steps[x] for x in names if x != tree):7.1f}")
        for name in sorted(names, key=lambda x: -steps[x]):
            print(f"    {name:<44} {steps[name]:7.1f}")
    print("timed alone (caches hot; about a third of what they cost in a request):")
    for name, cost in alone.items():
        print(f"  {name:<48} {cost:7.1f}")
    figures = {"best_us": best, "step_us": steps, "alone_us": alone}
    print(json.dumps({key: {k: round(v, 1) for k, v in values.items()} for key, values in figures.items()}))


def _root(name: str, spots: list) -> str:
    parents = {label: parent for label, parent, _, _ in spots}
    while name in parents:
        name = parents[name]
    return name


class _Clock:
    """Each spot's own CPU in the request: its time minus the time of the spots it called.
    A spot is an attribute of an object (or a key of a dict) replaced, while timed, by a
    wrapper reading the thread's CPU clock; what no spot covers is its parent's own."""

    def run(self, spots: list, top: str, call, calls: int) -> dict[str, float]:
        own: dict[str, int] = {label: 0 for label, *_ in spots} | {top: 0}
        stack: list[list] = []
        undo = []
        for label, _parent, owner, name in spots:
            original = owner[name] if isinstance(owner, dict) else getattr(owner, name)
            timed = self._timed(label, original, own, stack)
            undo.append((owner, name, original))
            if isinstance(owner, dict):
                owner[name] = timed
            else:
                object.__setattr__(owner, name, timed)
        try:
            whole = self._timed(top, call, own, stack)
            for _ in range(calls):
                whole()
        finally:
            for owner, name, original in reversed(undo):
                if isinstance(owner, dict):
                    owner[name] = original
                else:
                    object.__setattr__(owner, name, original)
        return {label: value / calls / 1000 for label, value in own.items()}

    @staticmethod
    def _timed(label, original, own, stack):
        clock = time.thread_time_ns

        def timed(*args, **kwargs):
            stack.append([clock(), 0])  # when it began, what its callees took
            try:
                return original(*args, **kwargs)
            finally:
                began, inner = stack.pop()
                spent = clock() - began
                own[label] += spent - inner
                if stack:
                    stack[-1][1] += spent

        return timed


if __name__ == "__main__":
    main()
