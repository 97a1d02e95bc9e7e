"""HIGHLEVEL_WEBHOOK_PUBLIC_KEY is read in every form it is pasted in (base64 as published,
PEM with its BEGIN/END lines, quoted, with literal \\n) and each verifies HighLevel's
signature; a forgery signed with the published text as a secret is refused; anything that
is not a key stops the service at start with one line naming the setting."""

from __future__ import annotations

import base64
import hashlib
import textwrap

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from helpers import fixture_bytes, leadrelay, moved
from workers.common.refusals import BadSignature
from workers.config import settings as settings_module
from workers.config.needed import ConfigError
from workers.sources import keys
from workers.sources.registry import SOURCES
from workers.vendors.highlevel import webhook

ED = ed25519.Ed25519PrivateKey.generate()
RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)
# The Ed25519 key integrations cite from HighLevel's Webhook Integration Guide
# (https://github.com/GoHighLevel/highlevel-api-docs/blob/main/docs/oauth/WebhookAuthentication.md).
PUBLISHED = "MCowBQYDK2VwAyEAi2HR1srL4o18O8BRa7gVJY7G7bupbN3H9AwJrHCDiOg="


def _forms(private) -> list[str]:
    """The forms a public key is pasted in: as published, PEM, quoted, escaped, wrapped."""
    public = private.public_key()
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    b64 = base64.b64encode(der).decode()
    return [
        b64,
        f'"{b64}"',
        f"'{b64}'",
        f"  {b64}\n",
        pem,
        f'"{pem}"',
        pem.replace("\n", "\\n"),
        f'"{pem.strip()}"'.replace("\n", "\\n"),
        "\n".join(textwrap.wrap(b64, 20)),
    ]


def _won() -> bytes:
    import time

    return moved(fixture_bytes("highlevel", "OpportunityStatusUpdate__won.json"), int(time.time()))


@pytest.mark.parametrize("form", range(9))
def test_each_pasted_form_of_a_key_verifies_highlevels_signature(form):
    body = _won()
    ed_key, rsa_key = _forms(ED)[form], _forms(RSA)[form]
    webhook.verify(body, {"x-ghl-signature": base64.b64encode(ED.sign(body)).decode()}, [ed_key])
    legacy = RSA.sign(body, webhook.padding.PKCS1v15(), webhook.hashes.SHA256())
    webhook.verify(body, {"x-wh-signature": base64.b64encode(legacy).decode()}, [rsa_key])
    assert SOURCES["highlevel"].secret_problems([ed_key, rsa_key]) == []


@pytest.mark.parametrize("form", range(9))
def test_a_forgery_signed_with_the_public_text_as_a_secret_is_refused(form):
    """The bypass: a key that did not parse was read as a seed, so anyone holding the
    published text could make the private key."""
    body = _won()
    text = _forms(ED)[form]
    for seed in (text, text.strip(), keys.unquoted(text)):
        forged = ed25519.Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed.encode()).digest())
        with pytest.raises(BadSignature):
            webhook.verify(body, {"x-ghl-signature": base64.b64encode(forged.sign(body)).decode()}, [text])


def test_highlevels_published_key_parses_and_a_forgery_made_from_its_text_is_refused():
    assert isinstance(keys.parse(PUBLISHED), ed25519.Ed25519PublicKey)
    body = _won()
    forged = ed25519.Ed25519PrivateKey.from_private_bytes(hashlib.sha256(PUBLISHED.encode()).digest())
    with pytest.raises(BadSignature):
        webhook.verify(body, {"x-ghl-signature": base64.b64encode(forged.sign(body)).decode()}, [PUBLISHED])
    with pytest.raises(ValueError):
        webhook.sign(PUBLISHED, body)  # only a seed signs here: the published key never does


@pytest.mark.parametrize(
    "value",
    [
        "not a key",
        "MCowBQYDK2VwAyEAi2HR1srL4o18O8BRa7gVJY7G7bupbN3H9AwJrHCDiO",  # one character short
        "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----",
        "highlevel-test-secret",  # what a shared secret looks like: never a seed unless it says so
    ],
)
def test_a_value_that_is_not_a_key_stops_the_service_at_start_with_one_line(env, monkeypatch, value):
    monkeypatch.setenv("HIGHLEVEL_WEBHOOK_PUBLIC_KEY", value)
    with pytest.raises(ConfigError) as refused:
        settings_module.load()
    assert refused.value.problems == [("HIGHLEVEL_WEBHOOK_PUBLIC_KEY", f"is not a public key: give it {keys.FORMS}")]
    checked = leadrelay("check-config")
    assert checked.returncode != 0 and "HIGHLEVEL_WEBHOOK_PUBLIC_KEY: is not a public key" in checked.stdout


def test_a_key_of_another_kind_is_refused_by_name(env, monkeypatch):
    from cryptography.hazmat.primitives.asymmetric import ec

    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    der = other.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    monkeypatch.setenv("HIGHLEVEL_WEBHOOK_PUBLIC_KEY", base64.b64encode(der).decode())
    with pytest.raises(ConfigError) as refused:
        settings_module.load()
    assert "signed with Ed25519 or RSA keys" in str(refused.value)


def test_every_source_whose_secret_is_a_key_refuses_the_public_text_as_a_secret():
    """Over the registry: a source with a key setting verifies only with the key's private
    half; sign() with the public text (a secret's role) is refused before it signs."""
    body = _won()
    for source in SOURCES.values():
        if source.traits.secret_shape != "public key":  # Close's hex key is a shared secret
            continue
        for text in _forms(ED):
            with pytest.raises(ValueError):
                source.sign(text, body)
            assert source.secret_problems([text]) == []
