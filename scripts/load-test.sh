#!/bin/sh
# Start the in-cluster load generator (manifests/load-test/): a Kubernetes Job running
# ApacheBench against the test app, through its Service or through the ALB, and print
# how to follow it and how to delete it.
set -eu

usage() {
    cat <<'USAGE'
Usage: scripts/load-test.sh [--dry-run] [options]

Creates a Job in the namespace load-test that runs `ab -c CONCURRENCY` for DURATION
against the test app, then prints how to follow it and how to delete it.

Options:
  --stack NAME          the stack (default: dev). Its kubeconfig build/kubeconfig-NAME
                        (from `make kubeconfig`) is used when KUBECONFIG is unset, and
                        --target alb reads its output albHostname
  --target TARGET       service (default): http://APP.NAMESPACE.svc.cluster.local, from inside
                        alb: the ALB's hostname, from the stack output albHostname
                        or a URL such as http://example.com/get
  --duration DURATION   seconds (300), or a number with s or m (300s, 5m); 1 s to 1 h
  --concurrency N       requests in flight at once (50); 1 to 1000
  --path PATH           request path for service and alb (default: /)
  --app-namespace NS    the app's namespace (default: test-app, config app.namespace)
  --app-name NAME       the app's Service (default: test-app, config app.name)
  --image IMAGE         the image with ab (default: the one in manifests/load-test/10-job.yaml)
  --name NAME           the Job's name (default: load-test-<UTC date and time>)
  --kubeconfig FILE     the kubeconfig to use
  --dry-run             print the commands and the Job instead of creating it
                        (prerequisites are still checked; a stack output is still read)

Environment:
  KUBECONFIG                  as for kubectl
  PULUMI_BACKEND_URL          for --target alb: state backend (default: file://<project>/.pulumi-state)
  PULUMI_CONFIG_PASSPHRASE    for --target alb on the local backend (or PULUMI_CONFIG_PASSPHRASE_FILE)
USAGE
}

# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

dry_run=0
stack=dev
target=service
duration=300
concurrency=50
request_path=/
app_namespace=test-app
app_name=test-app
image=""
job_name=""
kubeconfig=""
take_option() {
    case "$1" in
        --dry-run) dry_run=1 ;;
        --stack) stack=$2 ;;
        --target) target=$2 ;;
        --duration) duration=$2 ;;
        --concurrency) concurrency=$2 ;;
        --path) request_path=$2 ;;
        --app-namespace) app_namespace=$2 ;;
        --app-name) app_name=$2 ;;
        --image) image=$2 ;;
        --name) job_name=$2 ;;
        --kubeconfig) kubeconfig=$2 ;;
        *) fail "unknown option '$1' (see --help)" ;;
    esac
}
parse_options "--dry-run" take_option "$@"

project_dir=$(cd "$(dirname "$0")/.." && pwd)
manifest_dir="$project_dir/manifests/load-test"

# Validation, before anything touches the cluster.
bad_duration="--duration '$duration': give seconds (300) or a number with s or m (300s, 5m), from 1 s to 3600 s"
number=${duration%[sm]}
case "$number" in
    "" | *[!0-9]*) fail "$bad_duration" ;;
esac
number=$(printf '%s' "$number" | sed 's/^0*//')
if [ -z "$number" ] || [ "${#number}" -gt 4 ]; then fail "$bad_duration"; fi
case "$duration" in
    *m) seconds=$((number * 60)) ;;
    *) seconds=$number ;;
esac
if [ "$seconds" -gt 3600 ]; then fail "$bad_duration"; fi
case "$concurrency" in
    "" | *[!0-9]* | 0*) fail "--concurrency '$concurrency': give a whole number from 1 to 1000" ;;
esac
if [ "${#concurrency}" -gt 4 ] || [ "$concurrency" -gt 1000 ]; then
    fail "--concurrency '$concurrency': give a whole number from 1 to 1000"
fi
dns_label() {
    case "$1" in
        "" | -* | *- | *[!a-z0-9-]*) return 1 ;;
    esac
    [ "${#1}" -le "$2" ]
}
if ! dns_label "$app_namespace" 63; then fail "--app-namespace '$app_namespace' is not a namespace name"; fi
if ! dns_label "$app_name" 63; then fail "--app-name '$app_name' is not a Service name"; fi
case "$request_path" in
    /*) ;;
    *) fail "--path '$request_path' must start with /" ;;
esac
# Values go into the Job as YAML strings: no quotes, backslashes or white space.
no_specials() {
    case "$1" in
        *[\"\\\'\ \	]*) return 1 ;;
    esac
    return 0
}
if ! no_specials "$request_path"; then fail "--path '$request_path' may not contain quotes, backslashes or spaces"; fi
if [ -n "$image" ] && ! no_specials "$image"; then fail "--image '$image' is not an image reference"; fi
case "$target" in
    service|alb) ;;
    http://?*|https://?*)
        if ! no_specials "$target"; then fail "--target '$target' may not contain quotes, backslashes or spaces"; fi ;;
    *) fail "--target '$target': use service, alb, or a URL starting with http:// or https://" ;;
esac
if [ -z "$job_name" ]; then
    job_name="load-test-$(date -u +%Y%m%d-%H%M%S)"
elif ! dns_label "$job_name" 52; then
    fail "--name '$job_name': 1 to 52 lowercase letters, digits or '-', starting and ending with a letter or digit"
fi
require_stack_file "$project_dir" "$stack"

# Prerequisites.
missing=0
check_kubectl
if [ "$target" = alb ]; then
    backend=$(default_backend "$project_dir")
    check_pulumi_cli "to read the stack output albHostname"
    check_passphrase "$backend"
    check_local_state "$backend" "$stack"
fi
check_kubeconfig_file "$kubeconfig" "$stack"
if [ "$missing" -ne 0 ]; then exit 1; fi

kubeconfig=$(choose_kubeconfig "$kubeconfig" "$project_dir" "$stack")
kubectl_show() {
    if [ -n "$kubeconfig" ]; then show kubectl --kubeconfig "$kubeconfig" "$@"; else show kubectl "$@"; fi
}
kubectl_run() {
    if [ -n "$kubeconfig" ]; then kubectl --kubeconfig "$kubeconfig" "$@"; else kubectl "$@"; fi
}

case "$target" in
    service) url="http://$app_name.$app_namespace.svc.cluster.local$request_path" ;;
    alb)
        export PULUMI_BACKEND_URL="$backend"
        errors=$(mktemp)
        if ! hostname=$(cd "$project_dir" && pulumi stack output albHostname --stack "$stack" 2>"$errors"); then
            sed 's/^/pulumi: /' "$errors" >&2
            rm -f "$errors"
            echo "error: could not read the output 'albHostname' of stack '$stack'; is the stack up ('make up STACK=$stack')?" >&2
            exit 1
        fi
        rm -f "$errors"
        case "$hostname" in
            "" | null | *[!A-Za-z0-9.-]*)
                echo "error: the stack output albHostname is '$hostname', not a hostname: the ALB is not ready yet. See 'kubectl get ingress -n $app_namespace'" >&2
                exit 1 ;;
        esac
        url="http://$hostname$request_path" ;;
    *) url=$target ;;
esac

# The Job of manifests/load-test/10-job.yaml with this run's name, target, figures and image.
manifest=$(awk \
    -v name="$job_name" -v url="$url" -v concurrency="$concurrency" -v seconds="$seconds" \
    -v deadline="$((seconds + 120))" -v image="$image" '
    !started && /^#/ { next }
    !started {
        printf "# manifests/load-test/10-job.yaml: ab -c %s for %s s against %s\n", concurrency, seconds, url
        started = 1
    }
    !named && /^  name: / { print "  name: " name; named = 1; next }
    /^  activeDeadlineSeconds: / { print "  activeDeadlineSeconds: " deadline; next }
    image != "" && /^ +image: / { sub(/image: .*/, "image: " image) }
    /^ +- name: (TARGET_URL|CONCURRENCY|DURATION_SECONDS)$/ { variable = $3; print; next }
    variable != "" && /^ +value: / {
        value = (variable == "TARGET_URL") ? url : (variable == "CONCURRENCY") ? concurrency : seconds
        sub(/value: .*/, "value: \"" value "\"")
        variable = ""
    }
    { print }
' "$manifest_dir/10-job.yaml")

follow() {
    echo "Follow it:           $(kubectl_show logs --namespace load-test --follow "job/$job_name")"
    echo "Watch the scaling:   make watch STACK=$stack"
    echo "Stop and delete it:  $(kubectl_show delete job --namespace load-test "$job_name")"
    echo "Unless deleted, the Job and its log go 30 minutes after it ends (ttlSecondsAfterFinished)."
}

if [ "$dry_run" -eq 1 ]; then
    kubectl_show apply -f "$manifest_dir/00-namespace.yaml"
    echo "$(kubectl_show create -f -) <<'EOF'"
    printf '%s\n' "$manifest"
    echo "EOF"
    follow
    exit 0
fi

kubectl_run apply -f "$manifest_dir/00-namespace.yaml"
printf '%s\n' "$manifest" | kubectl_run create -f -
echo "Started job/$job_name in namespace load-test: ab -c $concurrency for $seconds s against $url"
follow
