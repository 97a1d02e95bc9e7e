"""The house's arrows run one way: webhook_app (the HTTP edge) imports workers (the core),
never the reverse, and the core loads no web stack."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEB_STACK = ("flask", "jinja2", "werkzeug", "prometheus_client", "webhook_app")


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_no_module_under_workers_imports_webhook_app():
    offenders = {
        str(path.relative_to(ROOT)): sorted(n for n in _imports(path) if n.split(".")[0] == "webhook_app")
        for path in sorted((ROOT / "workers").rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_check_sees_an_import_of_webhook_app(tmp_path):
    module = tmp_path / "bad.py"
    module.write_text("import os\nfrom webhook_app.errors import answer\n\ndef f():\n    import webhook_app\n")
    assert {"webhook_app", "webhook_app.errors"} <= _imports(module)


def test_importing_the_core_loads_no_web_stack():
    """A fresh interpreter: this test process has Flask loaded already."""
    code = (
        "import sys, workers.jobs, workers.cli, workers.sources, workers.config.settings\n"
        "import workers.intake.stageitems, workers.intake.receiver\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(WEB_STACK)!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


# What the web process loads: the request path (intake, sources, identity), the admin page's
# and /metrics' reads (reports, failures, graphapi's token pauses and version signals,
# events), and what all stand on. Never the engine, the sweep, the CRMs' clients, the jobs,
# the processes' own code or the stand-in: a report is read apart from the job that writes it.
WEB_LOADS = {
    "workers.common",
    "workers.config",
    "workers.events",
    "workers.failures",
    "workers.graphapi",
    "workers.identity",
    "workers.intake",
    "workers.jobnames",
    "workers.privacy",  # export and forget through the stage API's tokens; the audit trail
    "workers.reports",
    "workers.sources",
    "workers.vendors",  # their webhook parsers only (asserted below)
}


def test_the_web_process_loads_only_the_request_path_and_the_reports(env):
    code = (
        "import json, sys\n"
        "from webhook_app import create_app\n"
        "client = create_app().test_client()\n"
        "for path in ('/metrics', '/readyz', '/admin/'):\n"
        "    client.get(path)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('workers.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    modules = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert {".".join(m.split(".")[:2]) for m in modules} == WEB_LOADS
    assert {"workers.graphapi.graph", "workers.graphapi.capi"}.isdisjoint(modules), "the web never calls Meta"
    roles = {m.split(".")[3] for m in modules if m.startswith("workers.vendors.") and m.count(".") == 3}
    assert roles == {"webhook"}, "nor reads a CRM back"


def test_importing_the_web_package_builds_nothing():
    code = "import sys, webhook_app\nprint('flask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_the_command_line_loads_the_engine_only_when_a_command_runs():
    """`leadrelay --help` and a mistyped command answer without Redis, HTTP or the hashing tables."""
    code = (
        "import sys, workers.cli\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'redis', 'rq', 'requests', 'phonenumbers'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_no_test_module_imports_another():
    """What tests share lives in tests/helpers.py (and fixtures in conftest.py)."""
    tests = ROOT / "tests"
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            n for n in _imports(path) if n.split(".")[0].startswith("test_") or n == "conftest"
        )
        for path in sorted(tests.rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def _import_graph() -> dict[str, set[str]]:
    """Our modules and which of ours each imports, at the top or inside a function alike
    (an import moved into a function to dodge a circle is still a circle)."""
    paths = {_module_name(p): p for pkg in ("workers", "webhook_app") for p in (ROOT / pkg).rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
                base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
                target = ".".join(part for part in (base, node.module or "") if part)
                subs = {f"{target}.{alias.name}" for alias in node.names} & paths.keys()
                found.update(subs if len(subs) == len(node.names) else {target, *subs})
        # Importing a.b.c runs a/__init__ and a/b/__init__ first, unless this module is inside
        # them (they began before it ran): those packages are imported too.
        own = {".".join(name.split(".")[:n]) for n in range(1, name.count(".") + 1)}
        ancestors = {".".join(t.split(".")[:n]) for t in found for n in range(1, t.count(".") + 1)}
        graph[name] = ((found | (ancestors - own)) & paths.keys()) - {name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on.add(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
                on.discard(group[-1])
            if len(group) > 1:
                circles.append(sorted(group))

    for module in graph:
        if module not in index:
            visit(module)
    return circles


def test_no_import_circles():
    assert _circles(_import_graph()) == []


IMPORT_EACH_FIRST = """
import importlib, sys, traceback
names = sys.argv[1:]
failed = []
for name in names:
    for loaded in [m for m in sys.modules if m.split(".")[0] in ("workers", "webhook_app")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as err:
        failed.append(f"{name}: {type(err).__name__}: {err}")
print("\\n".join(failed))
"""


def test_every_module_imports_first_in_a_fresh_interpreter():
    """Each of our modules imported before any other of ours (as `python -c 'import x'`
    does): a circle through a package's __init__ crashes there, whatever the suite loads first."""
    names = sorted(_import_graph())
    out = subprocess.run([sys.executable, "-c", IMPORT_EACH_FIRST, *names], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", out.stdout


def test_the_circle_check_sees_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_a_worker_process_loads_no_stand_in():
    """The Graph stand-in is the sandbox's: `leadrelay run` loads it only then."""
    code = "import sys, workers.run.worker, workers.cli.service\nprint('workers.standin.server' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


# The packages from the bottom up: each may import its own and those below, never one
# above. workers.jobnames is a table that imports nothing, so any may name a job from it.
LAYERS = (
    ("workers", "workers.jobnames", "workers.identity"),
    ("workers.common",),
    ("workers.standin",),  # the sandbox's Graph stand-in: only common below it
    ("workers.sources",),
    ("workers.config",),
    ("workers.events",),
    ("workers.graphapi", "workers.crmapi", "workers.googleapi"),  # Meta's APIs; the CRMs' read-back APIs; Google's
    ("workers.reports",),  # read sides of what jobs write: the web process loads them alone
    ("workers.intake",),
    ("workers.failures",),
    ("workers.privacy",),  # a person's records found, exported, forgotten; the audit trail
    ("workers.engine",),
    ("workers.sweep",),
    ("workers.jobs",),  # every RQ entry point
    ("workers.run",),
    ("workers.cli",),
    ("webhook_app",),
)
# The paths earlier releases stored for jobs (workers/jobnames.py FORMER): each calls the
# job it stands for, above it, until the shim goes.
SHIMS = {"workers.batches": LAYERS.index(("workers.jobs",)), "workers.sweep": LAYERS.index(("workers.jobs",))}


# A vendor's folder (workers/vendors/<vendor>/) holds one module per role, each at its role's
# layer: its webhook parser never imports its API client, its stand-in nothing of the engine.
VENDOR_ROLES = {
    "webhook": "workers.sources",
    "client": "workers.crmapi",
    "standin": "workers.standin",
    "samples": "workers.run",
}


def _layer(module: str) -> int:
    if module in SHIMS:
        return SHIMS[module]
    parts = module.split(".")
    if parts[:2] == ["workers", "vendors"]:
        if len(parts) < 4:
            return 0  # the folders themselves: a docstring, no imports
        assert parts[3] in VENDOR_ROLES, f"{module}: a vendor's module is one of {sorted(VENDOR_ROLES)}"
        return _layer(VENDOR_ROLES[parts[3]] + ".x")
    matches = [
        (len(package), number)
        for number, packages in enumerate(LAYERS)
        for package in packages
        if module == package or (module.startswith(package + ".") and package != "workers")
    ]
    assert matches, f"{module} is in no layer: add its package to LAYERS"
    return max(matches)[1]


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} -> {other}"
        for module, imported in graph.items()
        for other in imported
        if _layer(other) > _layer(module)
    )


def test_every_import_runs_down_the_layers():
    assert _upward(_import_graph()) == []


def test_the_layer_check_sees_an_import_running_upward():
    graph = {"workers.common.policy": {"workers.engine.attempts"}, "workers.engine.attempts": {"workers.common.policy"}}
    assert _upward(graph) == ["workers.common.policy -> workers.engine.attempts"]


def test_every_package_has_its_layer():
    packages = {path.parent for path in (ROOT / "workers").rglob("__init__.py")}
    named = {package for layer in LAYERS for package in layer}
    found = {".".join(p.relative_to(ROOT).parts) for p in packages}
    assert {p for p in found if not p.startswith("workers.vendors")} - named == set()  # vendors: by role


def test_identity_imports_nothing_of_ours_outside_itself():
    """The match-key rules are pure: readable, testable and timeable on their own."""
    graph = _import_graph()
    outside = {
        module: sorted(name for name in imported if not name.startswith("workers.identity"))
        for module, imported in graph.items()
        if module.startswith("workers.identity")
    }
    assert len(outside) >= 6 and {module: names for module, names in outside.items() if names} == {}


# Test modules named for what a package holds as a whole rather than one module.
WHOLE_PACKAGE = {
    "tests/sources/test_registry.py",  # workers/sources/registry.py: the registry
    "tests/sources/test_fixtures.py",  # every source's fixtures folder
    "tests/cli/test_cli_conventions.py",  # what every command does alike
}
# Test folders whose code is not workers/<folder>/ (no folder is named like a package, so
# a test folder on sys.path can never stand in for the package).
CODE_OF = {"web": ROOT / "webhook_app", "jobs": ROOT / "workers"}


def test_tests_mirror_the_packages():
    """tests/<package>/test_<module>[_<aspect>].py tests that module of workers/<package>/
    (tests/web/: webhook_app; tests/jobs/: workers/jobs.py and jobnames.py); scenarios
    that cross packages live in tests/feature/."""
    tests = ROOT / "tests"
    strays = []
    for path in sorted(tests.rglob("test_*.py")):
        rel = path.relative_to(tests)
        if rel.parts[0] == "feature" or str(path.relative_to(ROOT)) in WHOLE_PACKAGE:
            continue
        package = CODE_OF.get(rel.parts[0], ROOT / "workers" / rel.parts[0])
        modules = {p.stem for p in package.glob("*.py")} if len(rel.parts) == 2 else set()
        if rel.parts[0] == "vendors":  # tests/vendors/<vendor>/test_<vendor>_<role>.py: one name per module
            modules = {f"{p.parent.name}_{p.stem}" for p in package.glob("*/*.py") if p.stem != "__init__"}
        stem = path.stem.removeprefix("test_")
        if not any(stem == m or stem.startswith(m + "_") for m in modules):
            strays.append(str(rel))
    assert strays == [] and not (tests / "workers").exists() and not (tests / "webhook_app").exists()
