# Two commands: `make run` and `make test`. Both build .venv on first use, from the lock
# files in requirements/ (exact versions, with hashes): what a fresh machine installs
# never changes with an upstream release. `make lock` refreshes them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install --quiet --disable-pip-version-check --no-compile
STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test test-fast bench lock lock-upgrade clean

# `make run` installs what the service needs and nothing more; `make test` adds the test
# tools (pytest, Playwright, Meta's SDK for its test vectors). No .pyc compiling at
# install: Python compiles what it imports, and most of pycountry never is. leadrelay
# itself is built with the locked setuptools (no build isolation: that would fetch the
# newest setuptools at every install).
$(STAMP): requirements/run.txt requirements/build.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "leadrelay needs Python 3.11 or newer; set PYTHON=/path/to/python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) --require-hashes -r requirements/run.txt -r requirements/build.txt
	$(PIP) --no-deps --no-build-isolation -e .
	@rm -f $(TEST_STAMP)
	@touch $(STAMP)

$(TEST_STAMP): requirements/test.txt $(STAMP)
	$(PIP) --require-hashes -r requirements/test.txt -r requirements/build.txt
	@touch $(TEST_STAMP)

run: $(STAMP)
	$(BIN)/leadrelay run

# Meta's Python SDK ships its normalisation tests only in its source archive: the SDK
# vectors test (tests/identity/test_userdata_sdk.py) reads them from there.
SDK_VECTORS := $(VENV)/sdk/.downloaded
$(SDK_VECTORS): $(TEST_STAMP)
	$(BIN)/pip download --quiet --no-deps --no-binary :all: -d $(VENV)/sdk \
	  "facebook_business==$$($(BIN)/python -c 'import importlib.metadata as m; print(m.version("facebook_business"))')"
	@touch $@

# Besides Python packages, the tests need a Chromium (the admin page's browser test) and
# faketime (the clock-skew tests): when the machine lacks them, tests/install-tools
# installs Debian's packages (about 340 MB, nearly all Chromium) with apt-get, as root or
# through password-less sudo, and says so. LEADRELAY_SKIP_BROWSER=1 skips the browser.
test: $(TEST_STAMP) $(SDK_VECTORS)
	@sh tests/install-tools
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -q

# The inner loop: everything but the tests that start processes or wait on real time
# (marked slow in tests/conftest.py): a fraction of `make test`'s time (about a tenth here).
test-fast: $(TEST_STAMP) $(SDK_VECTORS)
	$(BIN)/ruff check .
	$(BIN)/pytest -q -m "not slow"

bench: $(TEST_STAMP)
	$(BIN)/python bench/ingest.py

# The lock files, from pyproject.toml's ranges, for every platform and Python >= 3.11
# (uv's universal resolution; pip-tools locks only for the machine it runs on).
# `make lock` after editing pyproject.toml keeps every pin it can; `make lock-upgrade`
# moves everything to the newest release the ranges allow.
UV_VERSION := 0.13.9
TOOLS := .tools
LOCK := $(TOOLS)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes --no-header
lock:
	@test -x $(TOOLS)/bin/uv || { $(PYTHON) -m venv $(TOOLS) && $(TOOLS)/bin/pip install --quiet uv==$(UV_VERSION); }
	$(LOCK) $(UPGRADE) pyproject.toml -o requirements/run.txt
	$(LOCK) $(UPGRADE) pyproject.toml --extra test -c requirements/run.txt -o requirements/test.txt
	$(LOCK) $(UPGRADE) requirements/build.in -c requirements/run.txt -o requirements/build.txt

lock-upgrade:
	$(MAKE) lock UPGRADE=--upgrade

# The sandbox's state goes; a live service's (the embedded Redis in data/, when
# REDIS_URL is unset) is never touched here.
clean:
	rm -rf $(VENV) $(TOOLS) data/sandbox .pytest_cache .hypothesis .mypy_cache
