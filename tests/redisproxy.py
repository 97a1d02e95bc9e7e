"""A TCP proxy in front of the test Redis that can answer one command itself: Redis as a
client meets it after a restart (`-LOADING`) without restarting the test's Redis, which
every other test shares. The fault is on the wire, where Redis would put it."""

from __future__ import annotations

import socket
import threading


class RedisProxy:
    def __init__(self, port: int, command: bytes, answer: bytes, times: int = 1):
        self.target = ("127.0.0.1", port)
        # The first `times` requests holding `command` get `answer` (redis-py retries a few).
        self.command, self.answer, self.left = command, answer, times
        self.answered = threading.Event()  # all of them
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self.listener.getsockname()[1]}/0"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            threading.Thread(target=self._requests, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()

    def _requests(self, client: socket.socket, upstream: socket.socket) -> None:
        try:
            while data := client.recv(65536):
                if self.left > 0 and self.command in data:
                    self.left -= 1
                    client.sendall(self.answer)
                    if not self.left:
                        self.answered.set()
                    continue
                upstream.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        self.listener.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
