#!/bin/sh
# Write the kubeconfig of a stack's EKS cluster, read from the stack output `kubeconfig`,
# to a file only its owner can read, and print how to use it. The state backend is chosen
# as scripts/stack.sh chooses it: a local file backend unless PULUMI_BACKEND_URL says otherwise.
set -eu

usage() {
    cat <<'USAGE'
Usage: scripts/kubeconfig.sh [--dry-run] [--output FILE] [STACK]

Writes the kubeconfig of the stack's EKS cluster (the secret stack output `kubeconfig`)
to FILE with mode 600, and prints how to use it.

STACK          the stack (default: dev)
--output FILE  where to write it (default: build/kubeconfig-STACK in the project)
--dry-run      print the commands instead of running them (prerequisites are still checked)

Environment:
  PULUMI_BACKEND_URL          state backend (default: file://<project>/.pulumi-state)
  PULUMI_CONFIG_PASSPHRASE    passphrase of the stack's secrets on the local backend
                              (or PULUMI_CONFIG_PASSPHRASE_FILE)

kubectl then signs in with `aws eks get-token`, with the stack's aws:profile, role and
AWS CLI files if it has them: it needs the AWS CLI and the credentials that created the
cluster, or another IAM principal with an EKS access entry.
USAGE
}

# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

dry_run=0
output=""
stack=""
while [ "$#" -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --dry-run) dry_run=1 ;;
        --output)
            if [ "$#" -lt 2 ] || [ -z "$2" ]; then echo "error: --output needs a file name" >&2; exit 2; fi
            output=$2; shift ;;
        --output=*) output=${1#--output=} ;;
        -*) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
        *)
            if [ -n "$stack" ]; then echo "error: one stack only, got '$stack' and '$1'" >&2; exit 2; fi
            stack=$1 ;;
    esac
    shift
done
stack=${stack:-dev}
project_dir=$(cd "$(dirname "$0")/.." && pwd)

require_stack_file "$project_dir" "$stack"
output=${output:-$project_dir/build/kubeconfig-$stack}
case "$output" in
    /*) ;;
    *) output="$(pwd)/$output" ;;
esac

backend=$(default_backend "$project_dir")
missing=0
check_pulumi_cli "to read the stack output kubeconfig"
check_passphrase "$backend"
check_local_state "$backend" "$stack"
if [ "$missing" -ne 0 ]; then exit 1; fi

output_dir=$(dirname "$output")
if [ "$dry_run" -eq 1 ]; then
    show cd "$project_dir"
    show mkdir -p "$output_dir"
    printf '%s > %s\n' "$(show PULUMI_BACKEND_URL="$backend" pulumi stack output kubeconfig --show-secrets --stack "$stack")" "$(show "$output")"
    show chmod 600 "$output"
    exit 0
fi

cd "$project_dir"
export PULUMI_BACKEND_URL="$backend"
mkdir -p "$output_dir"
# Written next to the target and moved into place, so that a failure never leaves half a file.
partial="$output.partial.$$"
errors="$output.errors.$$"
trap 'rm -f "$partial" "$errors"' EXIT
if ! (umask 077 && pulumi stack output kubeconfig --show-secrets --stack "$stack" >"$partial" 2>"$errors"); then
    sed 's/^/pulumi: /' "$errors" >&2
    echo "error: could not read the output 'kubeconfig' of stack '$stack'. If the stack has no such output, the cluster is not up yet: run 'make up STACK=$stack'" >&2
    exit 1
fi
if ! grep -q -e '"clusters"' -e '^clusters:' "$partial"; then
    echo "error: the output 'kubeconfig' of stack '$stack' is empty or not a kubeconfig; run 'make up STACK=$stack' to finish creating the cluster" >&2
    exit 1
fi
mv -f "$partial" "$output"
chmod 600 "$output"

echo "Wrote the kubeconfig of stack '$stack' to $output (mode 600)."
echo "Use it in this shell:"
echo "  export KUBECONFIG=$output"
echo "  kubectl get nodes -L node.kubernetes.io/instance-type,karpenter.sh/nodepool"
echo "kubectl signs in through 'aws eks get-token' as 'make up' did (the stack's aws:profile, role and files, if any): it needs the AWS CLI and those credentials."
