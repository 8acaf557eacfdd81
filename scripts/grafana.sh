#!/bin/sh
# Open the Grafana of a stack's monitoring without exposing it: forward a port of this machine's
# loopback interface to the Grafana Service in the cluster, and print the URL, the user and the
# command that shows the admin password (a secret stack output): the password itself stays off the
# terminal, its scrollback and any recording of it. The state backend is chosen as
# scripts/stack.sh chooses it: a local file backend unless PULUMI_BACKEND_URL says otherwise.
set -eu

usage() {
    cat <<'USAGE'
Usage: scripts/grafana.sh [--dry-run] [options]

Forwards 127.0.0.1:PORT to Grafana in the cluster (kubectl port-forward) and prints its URL, user
and the command that shows the admin password (the secret stack output grafanaAdminPassword); the
namespace comes from the stack output monitoringNamespace. The password is never printed.
Runs until interrupted (Ctrl-C). Nothing listens beyond this machine's loopback interface.

Options:
  --stack NAME        the stack (default: dev); its kubeconfig build/kubeconfig-NAME
                      (from `make kubeconfig`) is used when KUBECONFIG is unset
  --port N            the local port (default: 3000), 1024 to 65535
  --kubeconfig FILE   the kubeconfig to use
  --dry-run           print the commands instead of running them (prerequisites are still checked)

Environment:
  PULUMI_BACKEND_URL          state backend (default: file://<project>/.pulumi-state)
  PULUMI_CONFIG_PASSPHRASE    passphrase of the stack's secrets on the local backend
                              (or PULUMI_CONFIG_PASSPHRASE_FILE)
USAGE
}

# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

GRAFANA_SERVICE=grafana
GRAFANA_PORT=80
GRAFANA_USER="admin"

dry_run=0
stack=dev
port=3000
kubeconfig=""
take_option() {
    case "$1" in
        --dry-run) dry_run=1 ;;
        --stack) stack=$2 ;;
        --port) port=$2 ;;
        --kubeconfig) kubeconfig=$2 ;;
        *) fail "unknown option '$1' (see --help)" ;;
    esac
}
parse_options "--dry-run" take_option "$@"

case "$port" in
    "" | *[!0-9]* | 0*) fail "--port '$port': give a port number from 1024 to 65535" ;;
esac
if [ "${#port}" -gt 5 ] || [ "$port" -lt 1024 ] || [ "$port" -gt 65535 ]; then
    fail "--port '$port': give a port number from 1024 to 65535"
fi
project_dir=$(cd "$(dirname "$0")/.." && pwd)
require_stack_file "$project_dir" "$stack"

backend=$(default_backend "$project_dir")
missing=0
check_pulumi_cli "to read the stack output monitoringNamespace"
check_passphrase "$backend"
check_local_state "$backend" "$stack"
check_kubectl
check_kubeconfig_file "$kubeconfig" "$stack"
if [ "$missing" -ne 0 ]; then exit 1; fi

kubeconfig=$(choose_kubeconfig "$kubeconfig" "$project_dir" "$stack")
# port_forward NAMESPACE RUNNER: RUNNER (show or exec) the kubectl command. Loopback only, said
# explicitly rather than left to kubectl's default.
port_forward() {
    namespace=$1
    runner=$2
    set -- port-forward --address 127.0.0.1 --namespace "$namespace" "service/$GRAFANA_SERVICE" "$port:$GRAFANA_PORT"
    if [ -n "$kubeconfig" ]; then set -- --kubeconfig "$kubeconfig" "$@"; fi
    $runner kubectl "$@"
}

if [ "$dry_run" -eq 1 ]; then
    show cd "$project_dir"
    show PULUMI_BACKEND_URL="$backend" pulumi stack output monitoringNamespace --stack "$stack"
    port_forward '<monitoringNamespace>' show
    exit 0
fi

cd "$project_dir"
export PULUMI_BACKEND_URL="$backend"
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
if ! namespace=$(pulumi stack output monitoringNamespace --stack "$stack" 2>"$errors"); then
    sed 's/^/pulumi: /' "$errors" >&2
    echo "error: could not read the output 'monitoringNamespace' of stack '$stack'. If the stack has no such output, it is not up yet, or was last updated before monitoring existed: run 'make up STACK=$stack'" >&2
    exit 1
fi
case "$namespace" in
    "" | null | '""')
        echo "error: monitoring is off in stack '$stack': set 'eks-autoscaling:monitoring: {enabled: true}' in Pulumi.$stack.yaml and run 'make up STACK=$stack' (docs/monitoring.md)" >&2
        exit 1 ;;
esac

echo "Grafana of stack '$stack': http://localhost:$port"
echo "  user:     $GRAFANA_USER"
echo "  password: not shown here; where it is safe to see it, run:"
printf '    %s\n' "$(show PULUMI_BACKEND_URL="$backend" pulumi --cwd "$project_dir" stack output grafanaAdminPassword \
    --show-secrets --stack "$stack")"
echo "Dashboards > eks-autoscaling: Karpenter Capacity, Karpenter Performance and the capacity plan of stack '$stack'."
echo "Alerts: Alerting > Alert rules (the rules Prometheus evaluates, from the capacity plan)."
echo "Forwarding 127.0.0.1:$port to service/$GRAFANA_SERVICE in namespace $namespace; Ctrl-C stops it."
port_forward "$namespace" exec
