#!/bin/sh
# Show, every few seconds and on one screen, what scales while a load test runs: the
# HorizontalPodAutoscaler and the app's pods, Karpenter's NodeClaims, the nodes with their
# instance type, capacity type, zone and NodePool, and the load-test Jobs.
set -eu

NODE_LABELS=node.kubernetes.io/instance-type,karpenter.sh/capacity-type,topology.kubernetes.io/zone,karpenter.sh/nodepool

usage() {
    cat <<'USAGE'
Usage: scripts/watch.sh [--dry-run] [--once] [options]

Every INTERVAL seconds, until interrupted (Ctrl-C): the HPA and pods of the app, Karpenter's
NodeClaims, the nodes (instance type, capacity type, zone, NodePool) and the load-test Jobs.

Options:
  --interval N          seconds between two refreshes (default: 5); 1 to 300
  --once                show everything once and exit (non-zero if a kubectl command failed)
  --stack NAME          the stack (default: dev); its kubeconfig build/kubeconfig-NAME
                        (from `make kubeconfig`) is used when KUBECONFIG is unset
  --app-namespace NS    the app's namespace (default: test-app, config app.namespace)
  --kubeconfig FILE     the kubeconfig to use
  --dry-run             print the kubectl commands instead of running them
                        (prerequisites are still checked)
USAGE
}

# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

dry_run=0
once=0
interval=5
stack=dev
app_namespace=test-app
kubeconfig=""
take_option() {
    case "$1" in
        --dry-run) dry_run=1 ;;
        --once) once=1 ;;
        --interval) interval=$2 ;;
        --stack) stack=$2 ;;
        --app-namespace) app_namespace=$2 ;;
        --kubeconfig) kubeconfig=$2 ;;
        *) fail "unknown option '$1' (see --help)" ;;
    esac
}
parse_options "--dry-run --once" take_option "$@"

case "$interval" in
    "" | *[!0-9]* | 0*) fail "--interval '$interval': give a whole number of seconds from 1 to 300" ;;
esac
if [ "${#interval}" -gt 3 ] || [ "$interval" -gt 300 ]; then
    fail "--interval '$interval': give a whole number of seconds from 1 to 300"
fi
case "$app_namespace" in
    "" | -* | *- | *[!a-z0-9-]*) fail "--app-namespace '$app_namespace' is not a namespace name" ;;
esac
project_dir=$(cd "$(dirname "$0")/.." && pwd)

missing=0
check_kubectl
check_kubeconfig_file "$kubeconfig" "$stack"
if [ "$missing" -ne 0 ]; then exit 1; fi

kubeconfig=$(choose_kubeconfig "$kubeconfig" "$project_dir" "$stack")

# One section per line: a title, a tab, the kubectl arguments.
sections() {
    printf '%s\t%s\n' \
        "HorizontalPodAutoscaler ($app_namespace)" "get hpa --namespace $app_namespace" \
        "Pods ($app_namespace)" "get pods --namespace $app_namespace -o wide" \
        "Karpenter NodeClaims" "get nodeclaims" \
        "Nodes" "get nodes -L $NODE_LABELS" \
        "Load-test Jobs (load-test)" "get jobs --namespace load-test"
}

kubectl_words() {
    if [ -n "$kubeconfig" ]; then
        set -- --kubeconfig "$kubeconfig" "$@"
    fi
    show kubectl "$@"
}

if [ "$dry_run" -eq 1 ]; then
    if [ "$once" -eq 0 ]; then echo "# repeated every $interval s until interrupted:"; fi
    sections | while IFS="$(printf '\t')" read -r _ arguments; do
        # shellcheck disable=SC2086 # the arguments hold no spaces of their own
        kubectl_words $arguments
    done
    if [ "$once" -eq 0 ]; then show sleep "$interval"; fi
    exit 0
fi

# Prints every section; its exit status is the number of kubectl commands that failed.
snapshot() {
    failed=0
    tab=$(printf '\t')
    lines=$(sections)
    while IFS=$tab read -r title arguments; do
        printf '== %s ==\n' "$title"
        # shellcheck disable=SC2086 # the arguments hold no spaces of their own
        if [ -n "$kubeconfig" ]; then
            kubectl --kubeconfig "$kubeconfig" $arguments 2>&1 || failed=$((failed + 1))
        else
            kubectl $arguments 2>&1 || failed=$((failed + 1))
        fi
        echo
    done <<EOF
$lines
EOF
    return "$failed"
}

if [ "$once" -eq 1 ]; then
    status=0
    snapshot || status=$?
    if [ "$status" -ne 0 ]; then echo "error: $status kubectl command(s) failed (see above)" >&2; exit 1; fi
    exit 0
fi

sections_total=$(sections | wc -l | tr -d ' ')
first=1
while :; do
    status=0
    frame=$(snapshot) || status=$?
    if [ -t 1 ]; then printf '\033[H\033[2J'; fi
    printf 'Every %s s, %s (Ctrl-C to stop)\n\n%s\n' "$interval" "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$frame"
    if [ "$first" -eq 1 ] && [ "$status" -eq "$sections_total" ]; then
        echo "error: every kubectl command failed: is the cluster reachable? Check KUBECONFIG, or run 'make kubeconfig STACK=$stack'" >&2
        exit 1
    fi
    first=0
    sleep "$interval"
done
