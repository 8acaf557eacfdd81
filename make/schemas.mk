# Generated files checked into the repository.
.PHONY: schemas

schemas: install ## Regenerate docs/schemas/workload-description.schema.json from the description's models
	$(PY) scripts/generate_description_schema.py
