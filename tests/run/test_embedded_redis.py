"""The embedded Redis keeps the queue across a restart (append-only file)."""

from rq import Queue

from workers.common.queues import SERIALIZER, connect
from workers.run.embedded_redis import EmbeddedRedis


def test_queue_survives_a_restart_of_the_embedded_redis(tmp_path):
    with EmbeddedRedis(tmp_path) as server:
        queue = Queue("leadrelay", connection=connect(server.url), serializer=SERIALIZER)
        queue.enqueue("workers.jobs.process_meta_lead", {"leadgen_id": "1"}, job_id="lead-meta-1")
    assert (tmp_path / "appendonly.aof").stat().st_size > 0
    with EmbeddedRedis(tmp_path) as server:
        queue = Queue("leadrelay", connection=connect(server.url), serializer=SERIALIZER)
        assert queue.job_ids == ["lead-meta-1"]
        assert queue.fetch_job("lead-meta-1").args == [{"leadgen_id": "1"}]


def test_server_runs_with_noeviction_and_appendonly(tmp_path):
    with EmbeddedRedis(tmp_path) as server:
        client = connect(server.url)
        assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
        assert client.config_get("appendonly") == {"appendonly": "yes"}


def test_its_folder_is_readable_by_this_user_alone(tmp_path):
    """The append-only file holds hashed match keys and lead ids: no other user reads it."""
    import stat

    folder = tmp_path / "data"
    folder.mkdir(mode=0o755)
    with EmbeddedRedis(folder):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
