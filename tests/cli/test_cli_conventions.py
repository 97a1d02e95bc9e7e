"""The `leadrelay` command behaves like the ones people know (click's conventions)."""

import importlib.metadata
import json
import time

from click.testing import CliRunner

from helpers import leadgen_body, sign
from webhook_app import create_app
from workers.cli import main
from workers.failures import deadletters, replay
from workers.graphapi.pauses import Pauses


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_version_and_short_help():
    assert invoke("--version").output.strip() == f"leadrelay {importlib.metadata.version('leadrelay')}"
    help_text = invoke("-h").output
    assert help_text == invoke("--help").output and "Commands:" in help_text
    summaries = help_text.split("Commands:")[1].splitlines()
    assert summaries and not any(line.rstrip().endswith(("...", "…")) for line in summaries)
    assert "-h, --help" in invoke("dead-letters", "list", "-h").output


def test_a_reason_with_a_typo_names_the_valid_ones(env):
    out = invoke("dead-letters", "list", "--reason", "autth")
    assert out.exit_code == 2 and "'transient', 'throttled', 'auth', 'invalid', 'expired', 'crashed'" in out.output


def test_replaying_or_showing_an_unknown_dead_letter_exits_1(env):
    replay = invoke("replay", "lead-meta-nope")
    assert replay.exit_code == 1 and "lead-meta-nope: not_found" in replay.output
    assert invoke("dead-letters", "show", "lead-meta-nope").exit_code == 1


def test_show_and_purge_a_dead_letter(env, redis_conn, graph, work):
    client = create_app().test_client()
    body = leadgen_body("5550001")
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    error = {"code": 100, "message": "m", "fbtrace_id": "T", "error_user_title": "Invalid parameter"}
    graph.then({"status": 400, "error": error}, on="lead")
    work()
    listed = invoke("dead-letters", "list").output
    assert "Read Meta's title and fbtrace_id" in listed  # the fix names them: the list shows both
    assert 'Meta\'s title: "Invalid parameter", fbtrace_id T' in listed
    shown = invoke("dead-letters", "show", "lead-meta-5550001")
    assert shown.exit_code == 0 and json.loads(shown.output)["call"] == "lead_read"
    assert "would purge 1" in invoke("dead-letters", "purge", "--reason", "invalid", "--dry-run").output
    assert "purged 1" in invoke("dead-letters", "purge", "--reason", "invalid").output
    assert deadletters.get(redis_conn, "lead-meta-5550001") is None
    assert invoke("dead-letters", "purge").exit_code == 2  # says which, or --all


def test_an_auth_replay_lifts_the_pause_before_the_jobs_run_again(env, redis_conn, graph, work):
    """Replayed jobs must find the token free the moment they are requeued: a worker
    may take them at once. Checked at each job's requeue, through the progress hook."""
    from helpers import PAGE_TOKEN
    from workers.common.queues import connect, queue

    client = create_app().test_client()
    graph.add_lead("5550002")
    graph.revoked.add(PAGE_TOKEN)
    body = leadgen_body("5550002", created_time=int(time.time()))
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    assert Pauses(redis_conn).all()
    graph.revoked.clear()
    paused_at_requeue = []

    class Progress:
        def __init__(self, _length):
            pass

        def __enter__(self):
            return lambda _n: paused_at_requeue.append(bool(Pauses(redis_conn).all()))

        def __exit__(self, *exc):
            return False

    q = queue(connect(env["REDIS_URL"]), "leadrelay")
    result = replay.run_replay(redis_conn, q, deadletters.Filter(reason="auth"), progress_factory=Progress)
    assert result["counts"]["requeued"] == 1 and paused_at_requeue == [False], result
    work()
    assert [e["event_id"] for e in graph.events] == ["meta:5550002:Lead"]


def test_negative_stages_are_recorded_not_sent_and_import_exits_0(env, graph, work, tmp_path):
    client = create_app().test_client()
    graph.add_lead("5550003", created_time=int(time.time()) - 600)
    body = leadgen_body("5550003", created_time=int(time.time()) - 600)
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    sheet = tmp_path / "stages.csv"
    sheet.write_text(f"leadgen_id,stage,occurred_at\n5550003,Disqualified,{int(time.time())}\n")
    out = invoke("import-stages", str(sheet))
    assert out.exit_code == 0, out.output
    assert "row 2: recorded negative stage 'Disqualified', not sent" in out.output
    assert "recorded (negative stages, not sent) 1, rejected 0" in out.output
    [kept] = [json.loads(line) for line in invoke("ignored").output.splitlines() if line.startswith("{")]
    assert kept["reason"] == "negative_stage" and kept["lead"] == "meta:5550003" and kept["source"] == "crm"
    work()
    assert [e["event_name"] for e in graph.events] == ["Lead"]


def test_answers_are_plain_language_on_stdout_and_log_lines_wait_for_verbose(env, graph, work, redis_conn):
    """`replay --reason auth` used to print a JSON `token_resumed` line among its answer."""
    from helpers import PAGE_TOKEN, leadrelay

    client = create_app().test_client()
    graph.add_lead("1234567890123456")
    graph.revoked.add(PAGE_TOKEN)
    body = leadgen_body("1234567890123456", created_time=int(time.time()))
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()  # refused: dead-lettered `auth`, the token paused
    graph.revoked.discard(PAGE_TOKEN)
    quiet = leadrelay("replay", "--reason", "auth")
    assert quiet.returncode == 0 and quiet.stdout.startswith("1 selected: requeued 1")
    assert "{" not in quiet.stdout + quiet.stderr  # no structured line, no progress bar off a terminal
    swept = leadrelay("sweep")
    assert swept.stdout.startswith("sweep: swept") and "{" not in swept.stdout + swept.stderr
    loud = leadrelay("-v", "sweep")
    assert '"event": "sweep"' in loud.stderr and "{" not in loud.stdout  # logs on stderr, answers on stdout
    as_json = json.loads(leadrelay("sweep", "--json").stdout)
    assert as_json["outcome"] == "swept"


def test_doctor_and_replay_answer_json_for_scripts(env, graph):
    from helpers import leadrelay

    graph.subscribed_pages.add("111")
    checked = json.loads(leadrelay("doctor", "--json").stdout)
    assert checked["passed"] == len(checked["checks"]) and {"name", "ok", "detail", "fix"} <= set(checked["checks"][0])
    replayed = leadrelay("replay", "--all", "--json")
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["counts"]["requeued"] == 0
