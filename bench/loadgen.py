"""A closed-loop HTTP load generator for loopback benchmarks: one keep-alive connection
per process, a fixed duration, every request's latency recorded."""

from __future__ import annotations

import http.client
import multiprocessing as mp
import time
from typing import Callable


def _client(
    port: int, make_request: Callable[[int, int], tuple[bytes, dict]], worker: int, duration: float, out: mp.Queue
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    latencies, statuses, i = [], {}, 0
    end = time.perf_counter() + duration
    while time.perf_counter() < end:
        body, headers = make_request(worker, i)
        i += 1
        started = time.perf_counter()
        conn.request("POST", "/webhooks/meta", body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        latencies.append(time.perf_counter() - started)
        statuses[response.status] = statuses.get(response.status, 0) + 1
        if response.getheader("Connection", "").lower() == "close":
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    out.put((latencies, statuses))


def run(port: int, make_request, connections: int, duration: float) -> dict:
    """Requests/s, latency percentiles (ms) and status counts over `duration` seconds."""
    out: mp.Queue = mp.Queue()
    procs = [mp.Process(target=_client, args=(port, make_request, w, duration, out)) for w in range(connections)]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    latencies = sorted(x for lat, _ in results for x in lat)
    statuses: dict = {}
    for _, st in results:
        for code, n in st.items():
            statuses[code] = statuses.get(code, 0) + n

    def pct(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    return {
        "requests": len(latencies),
        "rps": len(latencies) / duration,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "statuses": statuses,
    }
