"""A stage source gone quiet: the fix names the page that sets that source up, which exists."""

from pathlib import Path

import pytest

from workers.events import stagelag
from workers.sources.registry import CRM_SOURCES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("source", sorted(CRM_SOURCES))
def test_a_silent_sources_fix_points_at_a_page_that_sets_it_up(source):
    fix = stagelag._fix(source)
    page = stagelag.doc_page(source)
    assert page in fix and (ROOT / page).is_file()
    assert "set" in (ROOT / page).read_text().lower()
