"""Every registered source has fixtures, each listed in its folder's sources.toml with the
vendor page it comes from, and every fixture parses."""

import tomllib

import pytest

from helpers import FIXTURES
from workers.sources.registry import CRM_STAGES, SOURCES


def _bodies(folder) -> list:
    """A folder's fixtures (every source's, for FIXTURES): JSON, or XML for a SOAP sender (Salesforce)."""
    pattern = "*/*" if folder == FIXTURES else "*"
    return sorted([*folder.glob(pattern + ".json"), *folder.glob(pattern + ".xml")])


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_source_has_fixtures(name):
    assert _bodies(FIXTURES / name), f"tests/fixtures/{name}/ has no fixtures"


@pytest.mark.parametrize("path", _bodies(FIXTURES), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_parses(path):
    assert path.parent.name in SOURCES, f"fixtures for unregistered source {path.parent.name}"
    assert "__" in path.stem, "fixture names are <event>__<variant>.json"
    source = SOURCES[path.parent.name]
    body = path.read_bytes()
    parsed = source.parse(body, source.sign("seed:fixture-secret", body))  # as delivered: some read their headers
    # "__ignored" fixtures are deliveries acknowledged and skipped (or recorded: a cancelled
    # booking); all others carry leads (a CRM's: stage changes).
    carried = parsed["items"] if source.kind == CRM_STAGES else parsed["leads"]
    assert parsed["skipped"] + parsed.get("recorded", []) if path.stem.endswith("__ignored") else carried


@pytest.mark.parametrize("path", _bodies(FIXTURES), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_names_the_vendor_page_it_comes_from(path):
    """Copied from the vendor's documented example, or ours, written from a named page:
    a fixture is never our reading of the vendor without saying so."""
    manifest = path.parent / "sources.toml"
    assert manifest.is_file(), f"{path.parent.name}/ has no sources.toml"
    entry = tomllib.loads(manifest.read_text()).get(path.name)
    assert entry and entry["url"].startswith("https://"), f"{path.name} is not in sources.toml with its url"
    assert entry.get("copied") is True or entry.get("ours"), f"{path.name}: say `copied = true` or what is `ours`"
