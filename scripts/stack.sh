#!/bin/sh
# Run a Pulumi command on a stack of this project, on a local file backend unless
# PULUMI_BACKEND_URL names another one. Checks the prerequisites first and says
# what is missing and how to get it.
set -eu
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
# shellcheck source=scripts/lib/teardown.sh
. "$(dirname "$0")/lib/teardown.sh"

usage() {
    cat <<'USAGE'
Usage: scripts/stack.sh [--dry-run | --check] [--yes] COMMAND [STACK]

COMMAND  up | preview | destroy | output
STACK    the stack to use (default: dev); its settings are in Pulumi.<STACK>.yaml

Environment:
  PULUMI_BACKEND_URL          state backend (default: file://<project>/.pulumi-state)
  PULUMI_CONFIG_PASSPHRASE    passphrase of the stack's secrets (or PULUMI_CONFIG_PASSPHRASE_FILE)
  AWS_PROFILE, AWS_ACCESS_KEY_ID, ...   AWS credentials, as for the AWS CLI
  PULUMI_ARGS                 extra arguments for the pulumi command
  YES=1                       destroy: do not ask first (as --yes); needed without a terminal
  PROJECT_PYTHON              the project's Python, which pins the zones (default: <project>/.venv/bin/python)
  DESTROY_NODECLAIM_TIMEOUT   destroy: seconds to wait for Karpenter's nodes to go (default 900)
  DESTROY_POLL_SECONDS        destroy: seconds between two looks at them (default 10)
  DESTROY_LOG_GROUP_WAIT      destroy: seconds to watch for a control-plane log group EKS
                              creates again after the destroy (default 120)

up runs `pulumi up --refresh`, which first reads back what changed outside Pulumi (objects a
destroy deleted before it was cancelled, for one). Before a stack's first up it pins the VPC's
zones in Pulumi.<STACK>.yaml (network.zoneIds), and checks pinned zones against the VPC after.
preview runs `pulumi preview --refresh`.

destroy asks first: type the stack's name (or set YES=1). Then it deletes the app's Deployments
and the NodePools, when the cluster answers, and waits until Karpenter has terminated its nodes;
when the cluster does not answer, it says what to check in AWS. Then it runs pulumi destroy, and
deletes the control-plane log group if EKS creates it again with late log lines.

--dry-run prints the commands instead of running them (prerequisites are still checked).
--check checks the prerequisites only, and says how to get what is missing (make up runs it
before it installs anything).
USAGE
}

dry_run=0
check_only=0
while :; do
    case "${1:-}" in
        --dry-run) dry_run=1; shift ;;
        --check) check_only=1; shift ;;
        --yes) YES=1; shift ;;
        *) break ;;
    esac
done
case "${1:-}" in
    -h|--help) usage; exit 0 ;;
    up|preview|destroy|output) command=$1 ;;
    "") usage >&2; exit 2 ;;
    *) echo "error: unknown command '$1'; use up, preview, destroy or output" >&2; exit 2 ;;
esac
stack=${2:-dev}
project_dir=$(cd "$(dirname "$0")/.." && pwd)

require_stack_file "$project_dir" "$stack"

missing=0
check_pulumi_cli "to run pulumi $command"
case "$command" in up|preview|destroy) check_aws_cli ;; esac
python=${PROJECT_PYTHON:-$project_dir/.venv/bin/python}
# make up runs --check before it installs the virtualenv: only a run that pins the zones needs it.
if [ "$command" = "up" ] && [ "$check_only" -eq 0 ] && [ ! -x "$python" ]; then
    echo "missing: the project's virtualenv ($python), whose Python pins the stack's zones. Run 'make install' (make up does)" >&2
    missing=1
fi
# The AWS CLI reads the files the stack's AWS provider is given, as the kubeconfig does.
export_aws_cli_files "$(stack_file_first_item "$project_dir" "$stack" aws:sharedConfigFiles)" \
    "$(stack_file_first_item "$project_dir" "$stack" aws:sharedCredentialsFiles)"
if [ -z "${AWS_ACCESS_KEY_ID:-}" ] && [ -z "${AWS_PROFILE:-}" ] && [ -z "${AWS_WEB_IDENTITY_TOKEN_FILE:-}" ] \
    && [ ! -f "${AWS_SHARED_CREDENTIALS_FILE:-$HOME/.aws/credentials}" ] && [ ! -f "${AWS_CONFIG_FILE:-$HOME/.aws/config}" ]; then
    echo "missing: AWS credentials. Run 'aws configure' or 'aws sso login', or set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY" >&2
    missing=1
elif command -v aws >/dev/null 2>&1; then
    # The stack's aws:profile reaches the program's AWS provider, and overrides AWS_PROFILE there.
    profile=$(stack_file_value "$project_dir" "$stack" aws:profile)
    if ! aws ${profile:+--profile "$profile"} sts get-caller-identity >/dev/null 2>&1; then
        if [ -n "$profile" ]; then
            echo "missing: working AWS credentials of profile '$profile', the stack's aws:profile ('aws --profile $profile sts get-caller-identity' failed). Refresh them ('aws sso login --profile $profile') or fix aws:profile in Pulumi.$stack.yaml" >&2
        else
            echo "missing: working AWS credentials ('aws sts get-caller-identity' failed). Refresh them ('aws sso login') or check AWS_PROFILE" >&2
        fi
        missing=1
    fi
fi
backend=$(default_backend "$project_dir")
check_passphrase "$backend"
if [ "$missing" -ne 0 ]; then exit 1; fi
if [ "$check_only" -eq 1 ]; then echo "prerequisites of $command on stack $stack: found" >&2; exit 0; fi

run() {
    if [ "$dry_run" -eq 1 ]; then echo "$*"; else "$@"; fi
}

case "$backend" in
    file://*) run mkdir -p "${backend#file://}" ;;
esac
export PULUMI_BACKEND_URL="$backend"
cd "$project_dir"
if [ "$dry_run" -eq 1 ] || ! pulumi stack select "$stack" >/dev/null 2>&1; then
    if [ "$command" = "up" ] || [ "$command" = "preview" ]; then
        run pulumi stack select --create "$stack"
    else
        run pulumi stack select "$stack"
    fi
fi
case "$command" in
    up)
        # The zones are pinned before anything is created in them, and a change of them is refused.
        run "$python" -m scripts.zones pin --stack "$stack" || exit 1
        # shellcheck disable=SC2086 # PULUMI_ARGS holds several arguments on purpose
        run pulumi up --refresh --stack "$stack" ${PULUMI_ARGS:-} ;;
    preview)
        # shellcheck disable=SC2086
        run pulumi preview --refresh --stack "$stack" ${PULUMI_ARGS:-} ;;
    destroy)
        if [ "$dry_run" -eq 1 ]; then
            echo "# asks first: type the stack's name, or YES=1"
            echo "kubectl delete deployments --all --namespace <app namespace> --wait=false --ignore-not-found"
            echo "kubectl delete nodepools.karpenter.sh --all --wait=false"
            echo "kubectl get nodeclaims.karpenter.sh -o name  # until none is left, at most ${DESTROY_NODECLAIM_TIMEOUT:-900}s"
        else
            # Nothing is deleted before the answer: a "no" to pulumi destroy's own question came too late.
            confirm_destroy "$stack" || exit $?
            drain_karpenter_nodes "$stack" || exit 1
        fi
        # shellcheck disable=SC2086
        run pulumi destroy --yes --stack "$stack" ${PULUMI_ARGS:-}
        if [ "$dry_run" -eq 1 ]; then
            echo "aws logs delete-log-group --log-group-name /aws/eks/<cluster>/cluster  # if EKS creates it again within ${DESTROY_LOG_GROUP_WAIT:-120}s"
        else
            remove_recreated_log_group "$stack" "$cluster" "$region" "$profile" "$role_arn"
        fi ;;
    output)
        # shellcheck disable=SC2086
        run pulumi stack output --stack "$stack" ${PULUMI_ARGS:-} ;;
esac
