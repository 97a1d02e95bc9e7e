"""A webhook public key (HighLevel's) read in the forms it is pasted in, or refused: never
as a secret. Why: docs/decisions/keys-parsed-or-refused.md."""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

PublicKey = ed25519.Ed25519PublicKey | rsa.RSAPublicKey
# A signing seed of one's own (the sandbox's generated value, the tests' and benches'): an
# Ed25519 key pair made from it, whose private half only its holder can use. Never a
# fallback: a value is a seed only when it says so.
SEED_PREFIXES = ("seed:", "sandbox-")
FORMS = "base64 (as the vendor publishes it), or PEM with its BEGIN/END lines"


def unquoted(text: str) -> str:
    """The value as pasted: surrounding quotes and whitespace gone, a literal \\n a newline."""
    value = text.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1].strip()
    return value.replace("\\r", "").replace("\\n", "\n")


def seed(text: str) -> ed25519.Ed25519PrivateKey:
    """The private key a seed names (sign with it; its public half verifies)."""
    value = unquoted(text)
    if not value.startswith(SEED_PREFIXES):
        raise ValueError("only a seed (seed:...) signs here: the vendor's own private key signs its deliveries")
    return ed25519.Ed25519PrivateKey.from_private_bytes(hashlib.sha256(value.encode("utf-8")).digest())


@functools.lru_cache(maxsize=64)  # read on every delivery
def parse(text: str) -> PublicKey:
    """The public key `text` holds.

    Raises:
        ValueError: it is not an Ed25519 or RSA public key in one of FORMS (or a seed).
    """
    value = unquoted(text)
    if value.startswith(SEED_PREFIXES):
        return seed(value).public_key()
    try:
        if value.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(value.encode("ascii"))
        else:
            key = serialization.load_der_public_key(base64.b64decode("".join(value.split()), validate=True))
    except (binascii.Error, ValueError, TypeError, UnicodeEncodeError, UnsupportedAlgorithm):
        raise ValueError(f"is not a public key: give it {FORMS}") from None
    if not isinstance(key, (ed25519.Ed25519PublicKey, rsa.RSAPublicKey)):
        raise ValueError(f"is a {type(key).__name__}: webhooks are signed with Ed25519 or RSA keys")
    return key
