"""Meta's own Python SDK normalisation test vectors, run against our normaliser.

The vectors are read from the SDK's `normalize_test.py` in its source archive (`make test`
downloads it into .venv/sdk): each `assertEqual(Normalize.normalize_field(key, data), ...)`,
each `assertRaisesRegex(...)` block, and each loop over a list of inputs becomes a case.
Keys leadrelay never sends (Meta's SDK normalises some that the Conversions API takes
only from its own SDK) are listed in NOT_SENT and in docs/decisions/sdk-differences.md.
"""

from __future__ import annotations

import ast
import hashlib
import sys
import tarfile
import warnings
from pathlib import Path

import pytest

from workers.identity.matchkeys import HASHED as HASHED_KEYS
from workers.identity.userdata import Unusable, hash_value

SDK_ARCHIVES = sorted((Path(sys.prefix) / "sdk").glob("facebook_business-*.tar.gz"))
NOT_SENT = {"f5first", "f5last", "fi", "dobd", "dobm", "doby"}  # and currency, not a match key
# Vectors the SDK hashes that we drop on purpose (docs/decisions/sdk-differences.md): no
# RFC 5322 address has an escaped @ outside quotes.
REFUSED = {("em", "a\\@b@c.d")}


def _sdk_test_source() -> str:
    if not SDK_ARCHIVES:
        pytest.fail("Meta's SDK source archive is missing from .venv/sdk: run `make test`, which downloads it")
    with tarfile.open(SDK_ARCHIVES[-1]) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("serverside/tests/normalize_test.py"))
        return archive.extractfile(member).read().decode("utf-8")


def _value(node, names: dict):
    """A constant expression of the test file ('a' * 64, " %s " % ...), or a loop variable."""
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    code = compile(ast.Expression(node), "<vector>", "eval")
    if any(isinstance(n, (ast.Call, ast.Attribute, ast.Name)) for n in ast.walk(node)):
        raise ValueError("not a constant")
    return eval(code, {"__builtins__": {}})  # constants and operators only, checked above


def _normalize_call(node) -> tuple | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "normalize_field"
        and len(node.args) == 2
    ):
        return node.args[0], node.args[1]
    return None


def _cases_in(statements, names: dict, out: list) -> None:
    for statement in statements:
        if isinstance(statement, ast.For) and isinstance(statement.iter, (ast.Name, ast.List)):
            values = (
                names.get(statement.iter.id)
                if isinstance(statement.iter, ast.Name)
                else [_value(e, names) for e in statement.iter.elts]
            )
            for value in values or []:
                _cases_in(statement.body, {**names, statement.target.id: value}, out)
        elif isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            try:
                names[statement.targets[0].id] = (
                    [_value(e, names) for e in statement.value.elts]
                    if isinstance(statement.value, ast.List)
                    else _value(statement.value, names)
                )
            except ValueError:
                pass  # a computed value (hashlib...): no vector uses it
        elif isinstance(statement, ast.With):
            for inner in ast.walk(statement):
                call = _normalize_call(inner)
                if call:
                    out.append((_value(call[0], names), _value(call[1], names), "error", None))
        elif (
            isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Call)
            and getattr(statement.value.func, "attr", "") == "assertEqual"
        ):
            actual, expected = statement.value.args[:2]
            if isinstance(actual, ast.Call) and getattr(actual.func, "id", "") == "len":
                call = _normalize_call(actual.args[0])
                out.append((_value(call[0], names), _value(call[1], names), "hashed", None))
                continue
            call = _normalize_call(actual)
            if not call:
                continue
            if isinstance(expected, ast.Call):  # Normalize.hash_sha_256('plain')
                want = ("plain", _value(expected.args[0], names))
            else:
                constant = _value(expected, names)
                want = ("empty", None) if constant is None else ("exact", constant)
            out.append((_value(call[0], names), _value(call[1], names), *want))


def sdk_vectors() -> list[tuple]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # the SDK writes '\@' in a plain string
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = ast.parse(_sdk_test_source())
    out: list[tuple] = []
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef) and function.name.startswith("test_"):
            _cases_in(function.body, {}, out)
    return out


ALL_VECTORS = sdk_vectors() if SDK_ARCHIVES else []
# A hashed value passes through whatever the key, so those vectors run even on NOT_SENT keys.
VECTORS = [v for v in ALL_VECTORS if v[0] not in NOT_SENT or v[2] == "exact"]


def test_the_sdk_vectors_were_found_and_every_key_is_ours_or_listed():
    assert len(ALL_VECTORS) >= 40, "the SDK's test file changed shape: read it and update this parser"
    assert {key for key, *_ in ALL_VECTORS} - set(HASHED_KEYS) == NOT_SENT
    assert len(VECTORS) >= 16


def _ours(key: str) -> str:
    # A hashed value passes through whatever the key; the SDK tests it on f5last.
    return key if key in HASHED_KEYS else "fn"


@pytest.mark.parametrize("key, data, outcome, expected", VECTORS, ids=[f"{v[0]}:{v[1]!r:.30}:{v[2]}" for v in VECTORS])
def test_sdk_vector(key, data, outcome, expected):
    if outcome == "error" or (key, data) in REFUSED:
        with pytest.raises(Unusable):
            hash_value(_ours(key), data)
    elif outcome == "empty":
        with pytest.raises(Unusable) as err:
            hash_value(_ours(key), data)
        assert err.value.reason == "empty"
    elif outcome == "hashed":
        assert len(hash_value(_ours(key), data)) == 64
    elif outcome == "plain":
        assert hash_value(_ours(key), data) == hashlib.sha256(expected.encode()).hexdigest()
    else:
        assert hash_value(_ours(key), data) == expected
