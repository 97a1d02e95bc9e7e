"""Every registered source keeps the vendor contract in code, and its declarations are read
only through `Traits` (no other module looks up a source module's attributes by name)."""

import re
from pathlib import Path

import pytest

from workers.sources.contract import Traits, Vendor
from workers.sources.registry import SOURCES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_source_module_keeps_the_contract(name):
    assert isinstance(SOURCES[name].module, Vendor)
    assert isinstance(SOURCES[name].traits, Traits)


def test_a_module_missing_part_of_the_contract_is_refused():
    import types

    from workers.sources.registry import _traits

    with pytest.raises(TypeError, match="vendor contract"):
        _traits(types.ModuleType("workers.vendors.half"))


def test_no_module_but_the_contract_probes_a_source_module_by_attribute_name():
    probe = re.compile(r"(getattr|hasattr)\((source|s|SOURCES\[[^\]]+\]|self)\.module")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("workers", "webhook_app")
        for path in (ROOT / folder).rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if probe.search(line)
    ]
    assert found == []
