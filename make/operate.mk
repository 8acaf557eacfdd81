# Operating a running cluster: its kubeconfig, a load test, watching the scaling, and Grafana.
# Included by the Makefile; STACK comes from there (dev by default).
#   make load-test DURATION=120 CONCURRENCY=100 TARGET=alb
#   make grafana GRAFANA_PORT=3001
#   DRY_RUN=1 prints the commands instead of running them.

DURATION ?= 300
CONCURRENCY ?= 50
TARGET ?= service
INTERVAL ?= 5
OPERATE_DRY_RUN = $(if $(DRY_RUN),--dry-run)

.PHONY: kubeconfig load-test watch grafana

kubeconfig: ## Write the cluster's kubeconfig to build/kubeconfig-$(STACK) (mode 600) from the stack output
	scripts/kubeconfig.sh $(OPERATE_DRY_RUN) $(STACK)

load-test: ## Run ab in the cluster for DURATION s (300) with CONCURRENCY (50); TARGET=service|alb|URL
	scripts/load-test.sh $(OPERATE_DRY_RUN) --stack $(STACK) --target '$(TARGET)' --duration '$(DURATION)' --concurrency '$(CONCURRENCY)'

watch: ## HPA, pods, NodeClaims and nodes every INTERVAL s (5) while the load runs
	scripts/watch.sh $(OPERATE_DRY_RUN) --stack $(STACK) --interval '$(INTERVAL)'

GRAFANA_PORT ?= 3000

grafana: ## Forward 127.0.0.1:GRAFANA_PORT (3000) to Grafana and print its URL and admin password (monitoring.enabled)
	scripts/grafana.sh $(OPERATE_DRY_RUN) --stack $(STACK) --port '$(GRAFANA_PORT)'
