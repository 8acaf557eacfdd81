# Security gates on the offline plan of every stack, and the policy pack's unit tests; `check`
# runs the lint and type checks of make/quality.mk first.
# Included by the Makefile. checkov, parliament and pulumi-policy each pin packages the project
# pins differently (boto3, packaging, protobuf), so each runs from its own virtualenv under
# .tools/, installed from its lock (make/lock.mk) and rebuilt when the lock changes.
#   make check              every stack (each Pulumi.<stack>.yaml)
#   make check STACK=prod   one stack

CHECKOV := $(TOOLS)/checkov/bin/checkov
PARLIAMENT := $(TOOLS)/parliament/bin/parliament
POLICY_PY := $(TOOLS)/policy/bin/python
# STACK defaults to dev for the other targets; here only an explicit STACK=... narrows the check.
CHECK_STACKS = $(if $(filter command line,$(origin STACK)),$(STACK),$(patsubst Pulumi.%.yaml,%,$(wildcard Pulumi.*.yaml)))

.PHONY: check security-tools policy-tools policy-test

# $(1): the tool's directory under .tools/, $(2): its lock.
define tool-virtualenv
	rm -rf $(TOOLS)/$(1)
	$(PYTHON) -m venv $(TOOLS)/$(1)
	$(TOOLS)/$(1)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes --requirement $(2)
	@touch $(TOOLS)/$(1)/.installed
endef

$(TOOLS)/checkov/.installed: security/requirements-checkov.lock
	$(call tool-virtualenv,checkov,$<)

$(TOOLS)/parliament/.installed: security/requirements-parliament.lock
	$(call tool-virtualenv,parliament,$<)

$(TOOLS)/policy/.installed: policies/requirements.lock
	$(call tool-virtualenv,policy,$<)

security-tools: $(TOOLS)/checkov/.installed $(TOOLS)/parliament/.installed ## Install checkov and parliament under .tools/

policy-tools: $(TOOLS)/policy/.installed ## Install pulumi-policy under .tools/policy (used by `pulumi up --policy-pack policies`)

policy-test: policy-tools ## Run the policy pack's unit tests in its own environment
	cd policies && ../$(POLICY_PY) -m pytest -q

check: install lint typecheck security-tools policy-tools ## ruff and mypy (make/quality.mk), then the security gates on each stack's plan (STACK=s for one): checkov, parliament, IAM, trust, Pod Security, policy pack
	@set -e; for stack in $(CHECK_STACKS); do $(PY) -m offline plan --stack $$stack; done
	$(PY) -m security check $(addprefix --stack ,$(CHECK_STACKS)) --checkov $(CHECKOV) --parliament $(PARLIAMENT)
	SECURITY_TOOLS_REQUIRED=1 $(PY) -m pytest -q tests/security/test_tool_gates.py
	cd policies && ../$(POLICY_PY) -m pytest -q
