"""A stand-in for Meta's Graph API over real HTTP on loopback.

Notes: docs/internals/standin.md
"""

from __future__ import annotations

import argparse
import json
import random
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, parse_qsl, urlparse

from workers.standin.crm import CrmStandin
from workers.standin.google import GoogleStandin
from workers.standin.leads import FAILURES, VERSION_HEADER, VERSION_WARNING, LeadAds, auto_upgraded


class GraphStandin(LeadAds, CrmStandin, GoogleStandin):
    def __init__(self, any_lead: bool = False):
        self.crm_init()  # each CRM vendor's read API, on the same server (crm.py)
        self.google_init()  # Google's OAuth and Data Manager API (google.py)
        self.leads: dict[str, dict] = {}
        self.events: list[dict] = []  # every event Meta "received", with its dataset
        self.requests: list[dict] = []
        self.script: deque = deque()  # (path kind or None, action)
        self.any_lead = any_lead
        # Sent with every answer: Meta's `X-Ad-Api-Version-Warning` on calls it auto-upgraded, say.
        self.always_headers: dict[str, str] = {}
        self.warn_version = False  # send-test meta --fail version_warning: every answer says it was auto-upgraded
        self.dataset_id = "4242424242"  # the dataset GET /{id} answers for
        self.revoked: set[str] = set()  # tokens Meta now refuses (code 190)
        self.refuse_event_ids: set[str] = set()  # Meta refuses any request carrying one of these
        self.permissions = {
            "leads_retrieval",
            "pages_show_list",
            "pages_read_engagement",
            "ads_management",
            "pages_manage_ads",
        }  # what the page token was granted
        self.subscribed_pages: set[str] = set()  # pages with the app installed for leadgen
        self.token_expiry: dict[str, int] = {}  # token -> when Meta says it expires (unix; absent: never)
        # dataset id -> the Dataset Quality API's `web` list (absent: Meta has no web figures for it)
        self.dataset_quality: dict[str, list[dict]] = {}
        self.refused_until: dict[str, float] = {}  # token -> refused (190) until then
        self.failing: dict[str, list] = {}  # lead id -> [reads left to fail, (status, error)]
        self.test_leads: dict[str, str] = {}  # form id -> its one test lead (Meta allows one per form)
        # Several clients (add_client): which Pages each token reads, which token each
        # dataset takes, each Page's forms. Empty: any token reads and sends anything.
        self.page_tokens: dict[str, set[str]] = {}
        self.lead_pages: dict[str, str] = {}  # lead id -> its Page
        self.dataset_tokens: dict[str, str] = {}
        self.page_forms: dict[str, list[str]] = {}
        self.latency = 0.0  # seconds before answering each HTTP request (a batch waits once)
        self.usage_headers: dict[str, str] = {}  # rate-limit usage headers on batch and event answers
        self.chaos_rate = 0.0  # share of unscripted calls answered with a random chaos action
        self.chaos_actions: list[dict] = []
        self.random = random.Random(7)
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    # -- scripting ---------------------------------------------------------
    def then(self, action: dict, on: str | None = None, times: int = 1) -> None:
        """Answer the next `times` calls (to `on`: "lead" or "events", or any) with `action`:
        {"status": 400, "error": {...}, "headers": {...}}, {"delay": 3}, {"drop": True},
        {"raw": b"HTTP/1.1 200 OK..."} (bytes sent as they are, then the connection closed), or
        {"hold": threading.Event()} (answer once the test sets it)."""
        for _ in range(times):
            self.script.append((on, action))

    def script_scenario(self, leads=(), token_expires=None, unsubscribed=()) -> dict:
        """`send-test readiness`: leads to read, when tokens end, Pages without leadgen."""
        for lead in leads:
            fields = [{"name": "email", "values": [lead["email"]]}] if lead.get("email") else None
            self.add_lead(str(lead["id"]), field_data=fields, created_time=int(lead["created_time"]))
        self.token_expiry.update({token: int(at) for token, at in (token_expires or {}).items()})
        self.subscribed_pages.difference_update(str(page) for page in unsubscribed)
        return {"leads": len(leads), "tokens": len(token_expires or {}), "unsubscribed": len(unsubscribed)}

    def _chaos(self) -> dict | None:
        with self.lock:
            if self.chaos_rate and self.random.random() < self.chaos_rate:
                return self.random.choice(self.chaos_actions)
        return None

    def add_client(self, page_id: str, page_token: str, datasets: dict[str, str], forms: tuple[str, ...] = ()) -> None:
        """A client's Page (read with its own token, with these forms) and datasets
        (dataset id -> the CAPI token it takes); other tokens are refused as Meta refuses
        them: the object "does not exist" (100/33)."""
        self.page_tokens.setdefault(page_token, set()).add(page_id)
        self.dataset_tokens.update(datasets)
        self.page_forms[page_id] = list(forms)

    def events_for(self, dataset_id: str) -> list[dict]:
        return [event for event in self.events if event["dataset_id"] == dataset_id]

    def calls(self, kind: str) -> list[dict]:
        return [r for r in self.requests if r["kind"] == kind]

    # -- serving -------------------------------------------------------------
    def start(self, port: int = 0, host: str = "127.0.0.1") -> str:
        """Serve on `host` (loopback; a bench's network namespace gives its own address)."""
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # One write per answer: headers and body in separate segments would stall
            # keep-alive clients on delayed ACKs (about 40 ms a call).
            wbufsize = 1 << 16

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_GET(self):
                time.sleep(standin.latency)
                standin._handle(self, "GET")

            def do_POST(self):
                time.sleep(standin.latency)
                standin._handle(self, "POST")

            def do_DELETE(self):
                standin._handle(self, "DELETE")

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return f"http://{host}:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def _next_action(self, kind: str) -> dict | None:
        with self.lock:
            for i, (on, action) in enumerate(self.script):
                if on in (None, kind):
                    del self.script[i]
                    return action
        return None

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        url = urlparse(handler.path)
        parts = [p for p in url.path.split("/") if p]
        if self.warn_version and parts and re.fullmatch(r"v\d+\.\d+", parts[0]):
            self.always_headers[VERSION_HEADER] = auto_upgraded(parts[0])
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        crm = self.crm_kind(method, parts)
        google = self.google_kind(method, parts)
        if google:
            kind = google
        elif crm:
            kind = crm
        elif parts[:2] == ["_standin", "leads"]:
            kind = "standin"
        elif parts[:2] == ["_standin", "scenario"]:
            kind = "scenario"
        elif parts[-1:] == ["test_leads"]:
            kind = "test_leads"
        elif method == "DELETE":
            kind = "delete"
        elif method == "POST" and len(parts) == 1:
            kind = "batch"
        elif method == "POST" and parts[-1:] == ["events"]:
            kind = "events"
        elif parts[-1:] == ["subscribed_apps"]:
            kind = "subscribed_apps"
        elif parts[-1:] == ["leadgen_forms"]:
            kind = "page_forms"
        elif method == "GET" and parts[-1:] == ["dataset_quality"]:
            kind = "dataset_quality"
        elif method == "GET" and parts[-1:] == ["debug_token"]:
            kind = "debug_token"
        elif method == "GET" and parts[-2:] == ["me", "permissions"]:
            kind = "permissions"
        elif method == "GET" and parts[-1:] == ["leads"]:
            kind = "form_leads"
        elif method == "GET":
            kind = "probe" if parts[-1:] == ["me"] else "lead"
        else:
            kind = "other"
        record = {
            "kind": kind,
            "method": method,
            "path": url.path,
            "query": parse_qs(url.query),
            "headers": dict(handler.headers),
            "body": _body(raw),
            "at": time.time(),
        }
        with self.lock:
            self.requests.append(record)
        if google:
            return self._reply(handler, *self.google_answer(google, handler.headers, record["query"], record["body"]))
        if crm:
            time.sleep(self.crm_latency)
            action = self._next_action("crm")
            if action and action.get("delay"):
                time.sleep(action["delay"])
            if action and "status" in action:
                return self._reply(handler, action["status"], action.get("body", {}), action.get("headers"))
            return self._reply(
                handler, *self.crm_answer(crm, handler.headers, record["query"], record["body"], method, parts)
            )
        token = handler.headers.get("Authorization", "").removeprefix("Bearer ")
        if token in self.revoked or self.refused_until.get(token, 0) > time.time():
            return self._reply(
                handler,
                401,
                {
                    "error": {
                        "message": "Error validating access token: Session has expired",
                        "type": "OAuthException",
                        "code": 190,
                        "error_subcode": 463,
                        "fbtrace_id": "revoked",
                    }
                },
            )
        # Chaos stands for the network and Meta's service: it meets whole HTTP calls, not the
        # requests inside a Graph batch (a test scripts those one by one).
        action = self._next_action(kind) or (None if getattr(handler, "inner", False) else self._chaos())
        if action and action.get("hold"):  # a threading.Event: the answer waits until it is set
            action["hold"].wait(10)
        if action and action.get("delay"):
            time.sleep(action["delay"])
        if action and action.get("drop"):  # after a delay: a request lost before Meta processed it
            handler.close_connection = True
            handler.connection.close()
            return
        if action and action.get("raw"):  # these bytes as the whole answer: what no well-behaved server sends
            handler.close_connection = True
            handler.wfile.write(action["raw"])
            handler.wfile.flush()
            return
        if action and "status" in action:
            return self._reply(handler, action["status"], {"error": action.get("error", {})}, action.get("headers"))
        if kind == "batch":
            answers = [self._batch_item(parts[0], item, handler.headers) for item in (record["body"] or {})["batch"]]
            return self._reply(handler, 200, answers, self.usage_headers)
        if kind == "standin":
            body = record["body"] or {}
            if body.get("fail") not in (None, VERSION_WARNING, *FAILURES):
                known = sorted([*FAILURES, VERSION_WARNING])
                return self._reply(handler, 400, {"error": {"message": f"fail: one of {known}"}})
            return self._reply(handler, 200, self.add_failing_lead(**body))
        if kind == "scenario":
            return self._reply(handler, 200, self.script_scenario(**(record["body"] or {})))
        if kind == "test_leads":
            return self._test_leads(handler, method, parts[-2], record)
        if kind == "delete":
            found = self.leads.pop(parts[-1], None)
            self.test_leads = {f: lead for f, lead in self.test_leads.items() if lead != parts[-1]}
            if found is None:
                return self._not_found(handler)
            return self._reply(handler, 200, {"success": True})
        if kind == "dataset_quality":  # web events' match quality; CRM events: none (Meta's own page)
            dataset_id = (record["query"].get("dataset_id") or [""])[0]
            return self._reply(handler, 200, {"web": self.dataset_quality.get(dataset_id, [])})
        if kind == "debug_token":  # Meta's token inspection: when it expires, what it may do
            inspected = (record["query"].get("input_token") or [token])[0]
            expires = self.token_expiry.get(inspected, 0)
            data = {
                "is_valid": inspected not in self.revoked,
                "expires_at": expires,
                "data_access_expires_at": expires,
                "scopes": sorted(self.permissions),
            }
            if self.page_tokens:  # with clients set up, the Pages each token was granted
                reach = sorted(self.page_tokens.get(inspected, ()))
                data["granular_scopes"] = [{"scope": "leads_retrieval", "target_ids": reach}]
            return self._reply(handler, 200, {"data": data})
        if kind == "permissions":
            return self._reply(
                handler, 200, {"data": [{"permission": p, "status": "granted"} for p in sorted(self.permissions)]}
            )
        if not self._may(token, kind, parts):
            return self._not_found(handler)
        if kind == "page_forms":
            return self._reply(handler, 200, {"data": [{"id": f} for f in self.page_forms.get(parts[-2], [])]})
        if kind == "subscribed_apps":
            page = parts[-2]
            if method == "POST":
                self.subscribed_pages.add(page)
                return self._reply(handler, 200, {"success": True})
            apps = (
                [{"id": "app1", "name": "leadrelay", "subscribed_fields": ["leadgen"]}]
                if page in self.subscribed_pages
                else []
            )
            return self._reply(handler, 200, {"data": apps})
        if kind == "lead" and (parts[-1] == self.dataset_id or parts[-1] in self.dataset_tokens):
            return self._reply(handler, 200, {"id": parts[-1], "name": "stand-in dataset"})
        if kind == "form_leads":
            return self._reply(handler, 200, self._form_leads(parts[-2], record["query"]))
        if kind == "probe":
            return self._reply(handler, 200, {"id": "standin-me"})
        if kind == "lead":
            return self._read_lead(handler, parts[-1], token)
        if kind == "events":
            data = (record["body"] or {}).get("data", [])
            if any(event.get("event_id") in self.refuse_event_ids for event in data):
                return self._reply(
                    handler,
                    400,
                    {
                        "error": {
                            "message": "Invalid parameter",
                            "type": "OAuthException",
                            "code": 100,
                            "error_subcode": 2804016,
                            "error_user_title": "Unhashed user data",
                            "fbtrace_id": "refused",
                        }
                    },
                )
            with self.lock:
                for event in data:
                    self.events.append({"dataset_id": parts[-2], **event})
            return self._reply(
                handler,
                200,
                {"events_received": len(data), "messages": [], "fbtrace_id": f"trace{len(self.requests)}"},
                self.usage_headers,
            )
        return self._reply(handler, 404, {"error": {"code": 803, "message": "unknown path"}})

    def _may(self, token: str, kind: str, parts: list[str]) -> bool:
        """With clients set up, a token reaches only its own Pages, leads and datasets."""
        if kind in ("page_forms", "subscribed_apps") and self.page_tokens:
            return parts[-2] in self.page_tokens.get(token, ())
        if kind == "lead" and parts[-1] in self.lead_pages and self.page_tokens:
            return self.lead_pages[parts[-1]] in self.page_tokens.get(token, ())
        if kind == "lead" and parts[-1] in self.dataset_tokens or kind == "events" and parts[-2] in self.dataset_tokens:
            return self.dataset_tokens[parts[-1] if kind == "lead" else parts[-2]] == token
        return True

    def _reply(self, handler: BaseHTTPRequestHandler, status: int, body, headers: dict | None = None) -> None:
        payload = json.dumps(body).encode()
        handler.send_response(status)
        for name, value in {**self.always_headers, **(headers or {})}.items():
            handler.send_header(name, value)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


def _body(raw: bytes):
    """A request's body: JSON, or a form (an OAuth token request), as a dict."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return dict(parse_qsl(raw.decode("utf-8", "replace")))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--any-lead", action="store_true", help="answer any numeric lead id with a sample lead")
    args = parser.parse_args()
    standin = GraphStandin(any_lead=args.any_lead)
    base = standin.start(args.port)
    print(f"Graph stand-in on {base}; events received are printed below", flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.5)
            for event in standin.events[seen:]:
                print(json.dumps(event), flush=True)
            seen = len(standin.events)
    except KeyboardInterrupt:
        standin.stop()
