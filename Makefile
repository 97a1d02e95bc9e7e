# Two commands: `make run` and `make test`. Both build .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test bench clean

# `make run` installs what the service needs and nothing more; `make test` adds the test
# tools (pytest, Playwright and its browser, Meta's SDK for its test vectors). No .pyc
# compiling at install: Python compiles what it imports, and most of pycountry never is.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "leadrelay needs Python 3.11 or newer; set PYTHON=/path/to/python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile -e .
	@touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile -e '.[test]'
	@touch $(TEST_STAMP)

run: $(STAMP)
	$(BIN)/leadrelay run

# Meta's Python SDK ships its normalisation tests only in its source archive: the SDK
# vectors test (tests/workers/test_sdk_vectors.py) reads them from there.
SDK_VECTORS := $(VENV)/sdk/.downloaded
$(SDK_VECTORS): $(TEST_STAMP)
	$(BIN)/pip download --quiet --no-deps --no-binary :all: -d $(VENV)/sdk \
	  "facebook_business==$$($(BIN)/python -c 'import importlib.metadata as m; print(m.version("facebook_business"))')"
	@touch $@

test: $(TEST_STAMP) $(SDK_VECTORS)
	@sh tests/install-browser
	$(BIN)/pytest -q

bench: $(TEST_STAMP)
	$(BIN)/python bench/ingest.py

clean:
	rm -rf $(VENV) data .pytest_cache .hypothesis
