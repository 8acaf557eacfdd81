# The locks: every transitive version, with hashes, for each environment. The requirement files
# are the human-edited inputs (top-level pins); `make lock` resolves them into the *.lock files,
# which are what `make install` and the tool environments install. Versions already in a lock are
# kept unless an input changes them; UPGRADE=1 moves every unpinned dependency to its newest release.
#   make lock            after editing a requirement file
#   make lock UPGRADE=1  refresh the transitive versions

UV_VERSION := 0.13.9
UV := $(TOOLS)/uv/bin/uv
# One universal lock per environment (markers for other platforms), for the oldest supported Python.
LOCK_PYTHON := 3.11
UV_COMPILE = $(UV) pip compile --quiet --universal --python-version $(LOCK_PYTHON) --generate-hashes \
	--custom-compile-command 'make lock' $(if $(UPGRADE),--upgrade)

.PHONY: lock

$(UV):
	rm -rf $(TOOLS)/uv
	$(PYTHON) -m venv $(TOOLS)/uv
	$(TOOLS)/uv/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# The runtime lock is resolved within the development lock, so both carry the same versions.
lock: $(UV) ## Resolve every requirement file into its lock (UPGRADE=1 to refresh transitive versions)
	$(UV_COMPILE) requirements-dev.txt --output-file requirements-dev.lock
	$(UV_COMPILE) requirements.txt --constraint requirements-dev.lock --output-file requirements.lock
	$(UV_COMPILE) security/requirements-checkov.txt --output-file security/requirements-checkov.lock
	$(UV_COMPILE) security/requirements-parliament.txt --output-file security/requirements-parliament.lock
	$(UV_COMPILE) policies/requirements.txt --output-file policies/requirements.lock
