# Lint, format and type checks; `make check` runs them before the security gates.
# Settings: pyproject.toml ([tool.ruff], [tool.mypy]: strict on sizing/).

.PHONY: lint typecheck format

lint: install ## ruff: lint, and the formatting checked (not changed)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: install ## mypy over the project, strict on sizing/
	$(PY) -m mypy

format: install ## Apply ruff's safe fixes (imports, modern syntax) and format the tree
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .
