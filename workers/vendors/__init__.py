"""One folder per vendor we connect to (Zulip's and Sentry's integrations are the model):
everything about that vendor in one place, by role, each role at its own layer:

    webhook.py   its webhook source: verify, parse, lead key, default stages (the sources layer)
    client.py    its read-back API client, when its pushes carry ids only (the crmapi layer)
    standin.py   its API as the sandbox's stand-in answers it (the standin layer)
    samples.py   the sandbox's `send-test <vendor>` deliveries (the run layer)

A folder is found through its line in the registry (workers/sources/registry.py), which
names these modules by dotted path; tests/feature/test_layout.py gives each role its layer,
so a vendor's webhook parser never imports its API client. Its tests and fixtures are in
tests/vendors/<vendor>/, its page docs/<vendor>.md (CONTRIBUTING.md: "Adding a vendor").
"""
