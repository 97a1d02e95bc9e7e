"""Job functions for tests that need a work horse to die the hard way."""

import os
import signal


def die(_payload: dict) -> None:
    os.kill(os.getpid(), signal.SIGKILL)
