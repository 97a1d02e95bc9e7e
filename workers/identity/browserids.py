"""Browser fields a page passes to a form (hidden fields), checked before Meta sees them.

Notes: docs/internals/identity.md
"""

from __future__ import annotations

import ipaddress
import re

_PLACEHOLDER_WORDS = frozenset(
    {
        "",
        "undefined",
        "null",
        "none",
        "nil",
        "nan",
        "unknown",
        "n/a",
        "na",
        "false",
        "(not set)",
        "(none)",
        "[object object]",
        "-",
    }
)
_TEMPLATE = re.compile(r"\{\{.*\}\}|\{.*\}|%[^%\s]*%|\$\{.*\}|\[\[.*\]\]|<.*>|#\{.*\}")
_FBC = re.compile(r"fb\.\d\.\d{10,13}\.(?P<click>[A-Za-z0-9_-]+)")
_FBP = re.compile(r"fb\.\d\.\d{10,13}\.\d+")
_CLICK_ID = re.compile(r"[A-Za-z0-9_-]+")
# Addresses that are never a visitor's: a proxy's own hop or a misconfigured header.
_NOT_A_CLIENT = [
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
]


def present(value) -> str | None:
    """The value stripped, or None when it is empty or a placeholder a script left behind."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.lower() in _PLACEHOLDER_WORDS or _TEMPLATE.fullmatch(text):
        return None
    return text


def fbc(value, fbclid=None, seen_at: int | None = None) -> str | None:
    """A ready `_fbc` cookie when it has Meta's shape, else one built from the click id
    (`fb.1.<when it was seen, in ms>.<fbclid>`); the click id's case is kept."""
    ready = present(value)
    shaped = _FBC.fullmatch(ready) if ready else None
    if shaped and present(shaped.group("click")):
        return ready
    click = present(fbclid)
    if click and _CLICK_ID.fullmatch(click) and seen_at:
        return f"fb.1.{int(seen_at) * 1000}.{click}"
    return None


def fbp(value) -> str | None:
    """A real `_fbp` cookie value, or None: never invented."""
    text = present(value)
    return text if text and _FBP.fullmatch(text) else None


def client_ip(value) -> str | None:
    """The visitor's address from a single address or an X-Forwarded-For list: the first
    entry that parses and is not a private, loopback or link-local hop."""
    text = present(value)
    for part in (text or "").split(","):
        address = _address(part.strip())
        if address and not _internal(address):
            return address.compressed
    return None


def _address(text: str):
    if text.startswith("[") and "]" in text:
        text = text[1 : text.index("]")]  # [2001:db8::1]:443
    elif text.count(":") == 1:
        text = text.split(":")[0]  # 203.0.113.7:51234
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _internal(address) -> bool:
    if address.is_loopback or address.is_unspecified or address.is_link_local or address.is_multicast:
        return True
    if address.version == 6 and address.ipv4_mapped:
        return _internal(address.ipv4_mapped)
    return any(address in net for net in _NOT_A_CLIENT if net.version == address.version)


def page_url(value) -> str | None:
    text = present(value)
    return text if text and re.match(r"https?://[^\s/]+", text, re.IGNORECASE) else None
