"""What each process cannot start without, where a person finds each setting, and the
error that names every setting missing or malformed at once."""

from __future__ import annotations

from contextlib import contextmanager

WEB = "web"
WORKER = "worker"

# Which settings each process cannot start without.
REQUIRED = {
    WEB: ("REDIS_URL", "META_APP_SECRET", "META_VERIFY_TOKEN"),
    WORKER: ("REDIS_URL", "META_PAGE_ACCESS_TOKEN", "META_DATASET_ID"),
}


# Where a person finds each setting the processes cannot start without (docs/configuration.md).
WHERE = {
    "REDIS_URL": "start leadrelay (`make run`: it runs its own Redis while REDIS_URL is unset), or set "
    "your Redis provider's connection URL",
    "META_APP_SECRET": "Meta app dashboard > App settings > Basic > App secret",
    "META_VERIFY_TOKEN": "any string you choose; type the same in the app's Webhooks product (Page > leadgen)",
    "META_PAGE_ACCESS_TOKEN": "a Page or system-user token with leads_retrieval (Business settings > System users)",
    "META_DATASET_ID": "Events Manager > Data sources > your dataset > Settings: the numeric Dataset ID",
}


class ConfigError(ValueError):
    """One or more settings are missing or malformed; the message names each, one per line."""

    def __init__(self, setting: str, problem: str, more: list["ConfigError"] | None = None):
        self.problems = [(setting, problem)] + [p for err in (more or []) for p in err.problems]
        super().__init__("\n".join(f"{name}: {what}" for name, what in self.problems))
        self.setting = setting

    @classmethod
    def of(cls, errors: list["ConfigError"]) -> "ConfigError":
        return cls(*errors[0].problems[0], more=[cls(*p) for e in errors for p in e.problems][1:])


class Gather:
    """Checks that go on past a mistake: each `entry` whose check fails adds its problem
    and the next entry is checked all the same; `done` raises them all, one line each, so
    a file with four mistakes takes one run to fix, not four."""

    def __init__(self):
        self.errors: list[ConfigError] = []

    @contextmanager
    def entry(self):
        try:
            yield
        except ConfigError as err:
            self.errors.append(err)

    def done(self) -> None:
        if self.errors:
            raise ConfigError.of(self.errors)


_ATTRIBUTE = {
    "REDIS_URL": "redis_url",
    "META_APP_SECRET": "app_secrets",
    "META_VERIFY_TOKEN": "verify_token",
    "META_PAGE_ACCESS_TOKEN": "page_access_token",
    "META_DATASET_ID": "dataset_id",
}


def problems(settings, role: str, skip: tuple[str, ...] = ()) -> list[ConfigError]:
    """Every setting the role needs and lacks, each with where to find it."""
    return [
        ConfigError(name, f"must be set for the {role} process: {WHERE[name]}")
        for name in REQUIRED[role]
        if name not in skip and not getattr(settings, _ATTRIBUTE[name])
    ]


def require(settings, *roles: str, skip: tuple[str, ...] = ()) -> None:
    """Raises ConfigError naming every setting the roles need and lack."""
    missing = {err.setting: err for role in roles for err in problems(settings, role, skip)}
    if missing:
        raise ConfigError.of(list(missing.values()))
