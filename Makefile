# The single entry point for people and CI. `make serve` and `make test` are the README's two commands.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: setup browser serve test lint typecheck pytest openapi bench clean client-setup client-test

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

# The dashboard's browser tests drive Debian's Chromium (Playwright comes with the dev extras; it never
# downloads a browser). Installed only when missing, saying so, with apt-get's output kept in BROWSER_LOG;
# where it cannot be installed, those tests skip and say why.
CHROMIUM ?= /usr/bin/chromium
BROWSER_LOG ?= var/chromium-install.log
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
		mkdir -p "$$(dirname $(BROWSER_LOG))"; \
		echo "$(CHROMIUM) is missing: installing Debian's chromium for the browser tests"; \
		echo "  running: apt-get update && apt-get install -y --no-install-recommends chromium"; \
		echo "  its output goes to $(BROWSER_LOG)"; \
		if ( apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium ) \
			>$(BROWSER_LOG) 2>&1; then \
			echo "  chromium installed"; \
		else \
			echo "  chromium could not be installed (see $(BROWSER_LOG)): the browser tests will be skipped"; \
		fi; \
	fi

# Set up, load the demo catalogue and a month of its signals on the embedded SQLite database, print keys
# (the same ones each time: var/demo-keys.json), and serve; VPX_DEMO_FEED=1 has the server add a few demo
# signals a minute (stream, webhooks, auto-buy); VPX_MAIL_TO_LOG=1 writes the dashboard's emails (sign-up
# confirmation, password reset) to the log; VPX_DEMO_MAIL_PORT runs the demo's mail catcher, an SMTP sink
# on 127.0.0.1 for the demo account's mailboxes that keeps what they send in var/demo-mail/ (2525, or the
# environment's VPX_DEMO_MAIL_PORT, or DEMO_MAIL_PORT=… given to make; the next free port when it is taken);
# VPX_WEBHOOK_ALLOW_PRIVATE=1 lets webhooks reach a receiver on this machine (plain http, loopback), which
# only a development server may allow (the environment's value wins).
DEMO_MAIL_PORT ?= $(or $(VPX_DEMO_MAIL_PORT),2525)
WEBHOOK_ALLOW_PRIVATE ?= $(or $(VPX_WEBHOOK_ALLOW_PRIVATE),1)
serve: setup
	$(BIN)/vpx demo
	VPX_DEMO_FEED=1 VPX_MAIL_TO_LOG=1 VPX_DEMO_MAIL_PORT=$(DEMO_MAIL_PORT) VPX_WEBHOOK_ALLOW_PRIVATE=$(WEBHOOK_ALLOW_PRIVATE) $(BIN)/vpx serve --port $(PORT)

# Set up and run every check: lint, types, the tests on SQLite and PostgreSQL, and the Python client's.
test: setup lint typecheck pytest client-test

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/ruff check clients
	$(BIN)/ruff format --check clients

typecheck: setup client-setup
	$(BIN)/mypy
	cd clients/python && $(CURDIR)/$(BIN)/mypy

# Three test processes, a file's tests in one of them (module fixtures stay one per file): the suite
# waits on subprocesses, sockets and databases more than on the CPU. PYTEST_ARGS overrides (`-n 0`: one
# process).
PYTEST_ARGS ?= -n 3 --dist loadfile
pytest: setup browser
	$(BIN)/pytest $(PYTEST_ARGS)

# The OpenAPI document, and the Python client's models generated from it.
openapi: setup client-setup
	$(BIN)/vpx openapi --output openapi.json
	$(BIN)/python clients/python/scripts/generate_models.py

# The Python client (clients/python), its own distribution: installed editable with its dev extras
# (the pinned model generator); its tests run against this service, in process and as `vpx serve`.
client-setup: $(VENV)/.client-installed

$(VENV)/.client-installed: clients/python/pyproject.toml $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e "./clients/python[dev]"
	touch $@

client-test: setup client-setup
	$(BIN)/pytest clients/python/tests

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
