"""Where the web process listens, as people write it: the address they are told, and
whether the sandbox must warn that it listens on every interface."""

import pytest

from workers.run import webserver


@pytest.mark.parametrize(
    "bind, every, url",
    [
        ("0.0.0.0:8000", True, "http://127.0.0.1:8000"),
        (":8000", True, "http://127.0.0.1:8000"),
        ("[::]:8000", True, "http://127.0.0.1:8000"),
        ("127.0.0.1:8001", False, "http://127.0.0.1:8001"),
        ("10.0.0.5:8000", False, "http://10.0.0.5:8000"),
    ],
)
def test_an_address_on_every_interface_is_told_apart(bind, every, url):
    assert webserver.every_interface(bind) is every
    assert webserver.base_url(bind) == url


def test_a_unix_socket_is_no_interface():
    assert webserver.every_interface("unix:/run/leadrelay.sock") is False
