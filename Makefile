# eks-autoscaling: set-up and use. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
# The virtualenvs of tools kept apart from the project's (make/security.mk, make/lock.mk).
TOOLS := .tools
PY := $(VENV)/bin/python
STACK ?= dev

.DEFAULT_GOAL := help

.PHONY: help install promtool chromium test bench up preview destroy plan plan-diff schema sizing-docs

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# The lock pins every transitive version with its hashes: pip installs exactly those files, and
# refuses a dependency the lock lacks. requirements*.txt are its inputs (`make lock`).
# Then the project itself, editable (the checkout's code, as it is edited), with the lock's
# setuptools and without its dependencies (the lock's): its `eks-sizing` command lands in
# $(VENV)/bin and `python -m sizing` works from any folder.
$(VENV)/.installed: requirements-dev.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "error: Python 3.11+ is required (found: $$($(PYTHON) --version 2>&1))" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes --requirement requirements-dev.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation --editable .
	@touch $@

install: $(VENV)/.installed ## Create the virtualenv, install the locked requirements (requirements-dev.lock) and the project (the eks-sizing command), and promtool and Chromium where it can
	@scripts/install-promtool.sh || echo "warning: no promtool, so the tests of the alert rules are skipped; 'make promtool' says why" >&2
	@scripts/install-chromium.sh || echo "warning: no Chromium, so the browser tests of the HTML capacity report are skipped; 'make chromium' says why" >&2

promtool: ## Install promtool (Debian's prometheus package), which the tests of the alert rules run
	scripts/install-promtool.sh

chromium: ## Install Chromium (Debian's chromium package), in which the tests load the HTML capacity report
	scripts/install-chromium.sh

# The suite runs on every core, up to TEST_WORKERS processes; a test file stays on one process.
TEST_WORKERS ?= 4
test: install ## Run the whole test suite (no AWS, no Pulumi CLI needed)
	$(PY) -m pytest -q -n auto --maxprocesses $(TEST_WORKERS) --dist loadfile

bench: install ## Run the benchmarks and print their figures
	$(PY) -m benchmarks

plan: install ## Write the offline plan of a stack to build/plan/$(STACK) and run the project's own security gates on it
	$(PY) -m offline plan --stack $(STACK)
	$(PY) -m security gates --stack $(STACK)

# A and B: two stacks. diff exits 1 when the plans differ, which is an answer, not a failure.
plan-diff: install ## Plan stacks A and B (make plan-diff A=dev B=prod) and show how their plans differ
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make plan-diff A=<stack> B=<stack>" >&2; exit 2; }
	$(PY) -m offline plan --stack $(A)
	$(PY) -m offline plan --stack $(B)
	diff -ru build/plan/$(A) build/plan/$(B) || test $$? -eq 1

schema: install ## Regenerate schema.json of the component package and the input tables of the docs
	$(PY) -m scripts.generate_schema

sizing-docs: install ## Regenerate the capacity reports quoted in docs/sizing.md and the README's picture of the dev stack's HTML report
	$(PY) -m scripts.generate_sizing_docs

# The prerequisites are checked before the install, which takes minutes: a missing CLI, credentials
# or passphrase is said at once.
up: ## Create or update the stack (STACK=dev by default), refreshed first; pins its zones on first use; needs the Pulumi CLI and AWS credentials
	@scripts/stack.sh --check up $(STACK)
	@$(MAKE) --no-print-directory install
	scripts/stack.sh up $(STACK)

preview: ## Show what `make up` would change
	@scripts/stack.sh --check preview $(STACK)
	@$(MAKE) --no-print-directory install
	scripts/stack.sh preview $(STACK)

destroy: ## Delete every resource of the stack; asks first (YES=1: do not ask)
	scripts/stack.sh $(if $(filter 1 yes true,$(YES)),--yes) destroy $(STACK)

# Targets of their own concern: security gates (security.mk) and operating a cluster (operate.mk).
include $(wildcard make/*.mk)
