"""Configuration: every mistake fails at start with the setting's name."""

import pytest

from workers.config.needed import WEB, WORKER, ConfigError
from workers.config.settings import load

BASE = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "META_APP_SECRET": "s",
    "META_VERIFY_TOKEN": "v",
    "META_PAGE_ACCESS_TOKEN": "p",
    "META_DATASET_ID": "123",
}


def test_complete_settings_load_for_both_processes():
    settings = load(BASE, role=WEB)
    load(BASE, role=WORKER)
    assert settings.graph_url == "https://graph.facebook.com"
    assert settings.api_version == "v26.0"
    assert settings.dry_run  # no CAPI token


def test_app_secret_accepts_a_comma_separated_list_for_rotation():
    assert load({**BASE, "META_APP_SECRET": "new, old ,"}).app_secrets == ("new", "old")


@pytest.mark.parametrize(
    "missing, role",
    [
        ("META_APP_SECRET", WEB),
        ("META_VERIFY_TOKEN", WEB),
        ("REDIS_URL", WEB),
        ("META_PAGE_ACCESS_TOKEN", WORKER),
        ("META_DATASET_ID", WORKER),
        ("REDIS_URL", WORKER),
    ],
)
def test_missing_required_setting_is_named(missing, role):
    env = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(ConfigError) as err:
        load(env, role=role)
    assert err.value.setting == missing
    assert str(err.value).startswith(f"{missing}: must be set")


@pytest.mark.parametrize(
    "name, value",
    [
        ("META_DATASET_ID", "pixel-123"),
        ("META_API_VERSION", "26"),
        ("META_GRAPH_URL", "graph.facebook.com"),
        ("REDIS_URL", "localhost:6379"),
        ("LEADRELAY_DEFAULT_REGION", "XX"),
        ("LEADRELAY_MAX_BODY_BYTES", "lots"),
        ("LEADRELAY_MAX_BODY_BYTES", "0"),
        ("LEADRELAY_GRAPH_TIMEOUT_SECONDS", "-1"),
        ("LEADRELAY_LOG_LEVEL", "LOUD"),
    ],
)
def test_malformed_setting_is_named(name, value):
    with pytest.raises(ConfigError) as err:
        load({**BASE, name: value})
    assert err.value.setting == name


def test_a_malformed_required_setting_is_said_once_not_again_as_missing():
    with pytest.raises(ConfigError) as err:
        load({**BASE, "META_DATASET_ID": "pixel"}, role=WORKER)
    assert str(err.value).count("META_DATASET_ID") == 1 and "must be the numeric" in str(err.value)


def test_masked_summary_never_shows_secrets():
    summary = load({**BASE, "META_CAPI_ACCESS_TOKEN": "EAAB-secret"}).masked()
    assert summary["capi_access_token"] == "set"
    assert summary["verify_token"] == "set"
    assert "EAAB-secret" not in repr(summary) and summary["source_secrets"]["meta"] == "set"
    assert "'s'" not in repr(summary["source_secrets"])


@pytest.mark.parametrize(
    "url, shown",
    [
        ("rediss://default:pa55word@redis.example.com:6380/0", "rediss://default:***@redis.example.com:6380/0"),
        ("redis://:pa55word@10.0.0.5/2", "redis://:***@10.0.0.5/2"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
    ],
)
def test_masked_summary_hides_the_redis_password(url, shown):
    summary = load({**BASE, "REDIS_URL": url, "LEADRELAY_METRICS_TOKEN": "scrape"}).masked()
    assert summary["redis_url"] == shown
    assert summary["metrics_token"] == "set"


def test_the_example_mapping_file_shows_every_table_and_loads(env, monkeypatch):
    """docs/leadrelay.example.toml is what a person copies: it must load as it stands."""
    import tomllib

    from helpers import ROOT
    from workers.config import mappingfile
    from workers.config.settings import load

    path = ROOT / "docs" / "leadrelay.example.toml"
    tables = set(tomllib.loads(path.read_text()))
    assert {"forms", "stages", "datasets", "pages", "clients", "crm"} <= tables  # [sources.*] is there, commented
    for name in ("ACME_CAPI_TOKEN", "BRANDB_CAPI_TOKEN", "ACME_PAGE_TOKEN", "BRANDB_PAGE_TOKEN", "ACME_API_TOKEN"):
        monkeypatch.setenv(name, f"{name.lower()}-value")
    monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
    mapping = mappingfile.validate(load())
    assert sorted(mapping["routes"].datasets) >= ["acme", "brandb"]
    assert mapping["stages"].resolve("Demo held")[0] == "Schedule"
