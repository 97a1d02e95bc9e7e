"""Every registered source has fixtures, each listed in its folder's sources.toml with the
vendor page it comes from, and every fixture parses."""

import tomllib

import pytest

from helpers import FIXTURES, VENDOR_TESTS, fixture_dir, fixture_paths
from workers.sources.registry import CRM_STAGES, SOURCES

ALL = [(name, path) for name in sorted(SOURCES) for path in fixture_paths(name)]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_source_has_fixtures(name):
    assert fixture_paths(name), f"{fixture_dir(name)} has no fixtures"


def test_every_fixtures_folder_is_a_registered_sources():
    """A folder of deliveries (its sources.toml) left behind by a vendor gone or renamed."""
    folders = {p.parent for p in [*FIXTURES.glob("*/sources.toml"), *VENDOR_TESTS.rglob("sources.toml")]}
    assert folders == {fixture_dir(name) for name in SOURCES}


@pytest.mark.parametrize("name, path", ALL, ids=lambda v: v.name if hasattr(v, "name") else v)
def test_every_fixture_parses(name, path):
    assert "__" in path.stem, "fixture names are <event>__<variant>.json"
    source = SOURCES[name]
    body = path.read_bytes()
    parsed = source.parse(body, source.sign("seed:fixture-secret", body))  # as delivered: some read their headers
    # "__ignored" fixtures are deliveries acknowledged and skipped (or recorded: a cancelled
    # booking); all others carry leads (a CRM's: stage changes).
    carried = parsed["items"] if source.kind == CRM_STAGES else parsed["leads"]
    assert parsed["skipped"] + parsed.get("recorded", []) if path.stem.endswith("__ignored") else carried


@pytest.mark.parametrize("name, path", ALL, ids=lambda v: v.name if hasattr(v, "name") else v)
def test_every_fixture_names_the_vendor_page_it_comes_from(name, path):
    """Copied from the vendor's documented example, or ours, written from a named page:
    a fixture is never our reading of the vendor without saying so."""
    manifest = path.parent / "sources.toml"
    assert manifest.is_file(), f"{path.parent} has no sources.toml"
    entry = tomllib.loads(manifest.read_text()).get(path.name)
    assert entry and entry["url"].startswith("https://"), f"{path.name} is not in sources.toml with its url"
    assert entry.get("copied") is True or entry.get("ours"), f"{path.name}: say `copied = true` or what is `ours`"
