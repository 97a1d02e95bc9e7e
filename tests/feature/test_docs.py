"""The docs a newcomer reads: a short README from which every page is reachable, links
that lead somewhere, and nothing that points outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import ROOT

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _pages() -> set[Path]:
    return {*ROOT.glob("docs/**/*.md"), ROOT / "README.md", ROOT / "CONTRIBUTING.md"}


def _links(page: Path) -> set[Path]:
    found = set()
    for target in LINK.findall(page.read_text()):
        if "://" not in target and not target.startswith("mailto:"):
            found.add((page.parent / target).resolve())
    return found


def test_every_docs_page_is_reachable_from_the_readme():
    seen, todo = set(), [ROOT / "README.md"]
    while todo:
        page = todo.pop()
        if page in seen or page.suffix != ".md":
            continue
        seen.add(page)
        todo += [link for link in _links(page) if link.is_file()]
    assert {p.relative_to(ROOT) for p in _pages() - seen} == set()


def test_every_link_leads_to_a_file_of_the_repository():
    broken = {
        f"{page.relative_to(ROOT)} -> {link}"
        for page in _pages()
        for link in _links(page)
        if not link.exists() or ROOT not in link.parents
    }
    assert broken == set()


def test_the_readme_is_the_short_path():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 200


def test_no_doc_or_comment_cites_a_file_outside_the_repository():
    """Vendor rules are told in our own words or linked at the vendor's docs."""
    outside = re.compile(r"\.\./shared|(?<![\w/])spec/(meta|forms|stage-sources)\.md|\bspec §")
    files = [*_pages(), *ROOT.glob("workers/**/*.py"), *ROOT.glob("webhook_app/**/*.py"), *ROOT.glob("bench/*.py")]
    assert sorted(str(f.relative_to(ROOT)) for f in files if outside.search(f.read_text())) == []


def test_every_log_line_the_docs_tell_you_to_watch_for_is_one_the_code_logs():
    """A walkthrough that says to look for a log line nothing logs sends people hunting."""
    code = "".join(p.read_text() for p in [*ROOT.glob("workers/**/*.py"), *ROOT.glob("webhook_app/**/*.py")])
    named = {name for page in _pages() for name in re.findall(r'"event": "([a-z_]+)"', page.read_text())}
    assert named and {name for name in named if f'"{name}"' not in code} == set()
