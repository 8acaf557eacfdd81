"""The monitoring content generated from the stack configuration and its capacity plan: the
planned figures, the alert rules and the Grafana dashboards."""
