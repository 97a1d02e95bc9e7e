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


def _layout_sections() -> dict[str, str]:
    """The text of docs/design.md's layout map under each folder it names."""
    block = (ROOT / "docs" / "design.md").read_text().split("## Layout", 1)[1].split("```", 2)[1]
    sections: dict[str, str] = {}
    top = current = ""
    for line in block.splitlines():
        folder = re.match(r"^( {0,2})([a-z_]+)/\s", line + " ")
        if folder and not folder.group(1):
            top = current = folder.group(2)
        elif folder:
            current = f"{top}/{folder.group(2)}"
        elif re.match(r"^ {2}\w+\.py\s", line):
            current = top  # a module of the top folder itself (workers/jobs.py)
        sections[current] = sections.get(current, "") + line + "\n"
    return sections


def _our_modules() -> list[Path]:
    return [
        p.relative_to(ROOT)
        for p in sorted([*ROOT.glob("workers/**/*.py"), *ROOT.glob("webhook_app/**/*.py")])
        if p.name != "__init__.py" or p.parent.name == "webhook_app"
    ]


# A folder inside a folder of the map is written `name/ (a.py, b.py)` (workers/vendors/).
NESTED = re.compile(r"(\w+)/ \(([^)]*)\)")


def _named_in_map(module: Path, sections: dict[str, str]) -> bool:
    folder = str(module.parent)
    if folder in sections:
        return bool(re.search(rf"(?<![\w./]){re.escape(module.name)}", NESTED.sub("", sections[folder])))
    return any(
        name == module.parent.name and re.search(rf"\b{re.escape(module.name)}", names)
        for name, names in NESTED.findall(sections.get(str(module.parent.parent), ""))
    )


def test_the_layout_map_names_every_module_under_its_folder():
    sections = _layout_sections()
    assert [str(module) for module in _our_modules() if not _named_in_map(module, sections)] == []


def test_every_module_the_layout_map_names_exists():
    sections = _layout_sections()
    ours = {str(m) for m in _our_modules()} | {f"{m.parent}/__init__.py" for m in _our_modules()}
    named = {
        f"{folder}/{name}"
        for folder, text in sections.items()
        if folder.startswith(("workers", "webhook_app"))
        for name in re.findall(r"(?<![\w./])(\w+\.py)\b", NESTED.sub("", text))
    } | {
        f"{folder}/{inner}/{name}"
        for folder, text in sections.items()
        for inner, names in NESTED.findall(text)
        for name in re.findall(r"\w+\.py", names)
    }
    assert named - ours == set()


def test_every_package_is_on_the_short_maps_too():
    """workers/__init__.py's map and CONTRIBUTING.md's layer line name every package."""
    packages = {p.parent.name for p in (ROOT / "workers").glob("*/__init__.py")}
    docstring = (ROOT / "workers" / "__init__.py").read_text()
    contributing = (ROOT / "CONTRIBUTING.md").read_text().split("## Layout", 1)[1].split("\n\n", 3)[2]
    assert {p for p in packages if f"{p}/" not in docstring} == set()
    assert {p for p in packages if not re.search(rf"\b{p}\b", contributing)} == set()


def test_every_path_the_adding_a_vendor_recipe_names_exists():
    """CONTRIBUTING's recipe, read with `<vendor>` as Close (the vendor it was proven on) and
    `<name>` as Typeform: every file and folder it names is there."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    recipe = text[text.index("## Adding a vendor") :]
    recipe = recipe[: recipe.index("\n## ", 3)] if "\n## " in recipe[3:] else recipe
    named = {p for p in re.findall(r"`([\w<>./-]+/[\w<>./-]*)`", recipe) if not p.startswith("http")}
    paths = {p.replace("<vendor>", "close").replace("<name>", "typeform") for p in named}
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert len(paths) >= 10 and missing == []
