# shellcheck shell=sh disable=SC2034 # $missing is read by the scripts that source this file
# Helpers of the scripts in scripts/; sourced by them, never run on its own. The callers
# set `missing=0` before the check_* functions, which set it to 1 for each thing missing.

# Print the arguments as one shell command line, quoting those that need it.
show() {
    line=""
    for arg in "$@"; do
        case "$arg" in
            "" | *[!A-Za-z0-9_./:=@%+,-]*) arg="'$(printf '%s' "$arg" | sed "s/'/'\\\\''/g")'" ;;
        esac
        line="${line:+$line }$arg"
    done
    printf '%s\n' "$line"
}

# Bad usage: say why and exit 2.
fail() { echo "error: $*" >&2; exit 2; }

# parse_options FLAGS HANDLER ARG...: the command line of an operating script. Each "--name value"
# or "--name=value", and each flag named in the space-separated FLAGS (it takes no value), goes to
# "HANDLER NAME VALUE" (VALUE empty for a flag), which fails on a name it does not know; --help
# prints the script's usage.
parse_options() {
    option_flags=" $1 "
    option_handler=$2
    shift 2
    while [ "$#" -gt 0 ]; do
        case "$1" in
            -h|--help) usage; exit 0 ;;
            --*=*) option_name=${1%%=*}; option_value=${1#*=} ;;
            --*)
                option_name=$1
                option_value=""
                case "$option_flags" in
                    *" $1 "*) ;;
                    *)
                        if [ "$#" -lt 2 ]; then fail "$option_name needs a value (see --help)"; fi
                        option_value=$2
                        shift ;;
                esac ;;
            *) fail "unexpected argument '$1' (see --help)" ;;
        esac
        shift
        "$option_handler" "$option_name" "$option_value"
    done
}

# require_stack_file PROJECT_DIR STACK: exit 2, naming the stacks there are, unless
# Pulumi.STACK.yaml exists.
require_stack_file() {
    if [ -f "$1/Pulumi.$2.yaml" ]; then return 0; fi
    stacks=""
    for file in "$1"/Pulumi.*.yaml; do
        name=${file##*/Pulumi.}
        stacks="$stacks ${name%.yaml}"
    done
    fail "no stack file Pulumi.$2.yaml; the stacks are:$stacks"
}

# stack_file_value PROJECT_DIR STACK KEY: the plain value of a top-level KEY (aws:profile) of
# Pulumi.STACK.yaml, without quotes or a trailing comment; nothing when the file does not set it.
# For checks that run before the stack exists in the backend, where `pulumi config get` cannot.
stack_file_value() {
    sed -n -e "/^[[:space:]]*$3:/!d" -e "s/^[[:space:]]*$3:[[:space:]]*//" -e 's/[[:space:]][[:space:]]*#.*$//' \
        -e 's/[[:space:]]*$//' -e "s/^[\"']\\(.*\\)[\"']\$/\\1/" -e p -e q "$1/Pulumi.$2.yaml"
}

# stack_file_first_item PROJECT_DIR STACK KEY: the first entry of a top-level list KEY
# (aws:sharedConfigFiles) of Pulumi.STACK.yaml, written `[a, b]` or as `- a` lines under the key,
# without quotes or a trailing comment; nothing when the file does not set it.
stack_file_first_item() {
    awk -v key="$3" '
        function clean(value) {
            sub(/[[:space:]]+#.*$/, "", value)
            gsub(/^[[:space:]"\047]+|[[:space:]"\047]+$/, "", value)
            return value
        }
        listed && /^[[:space:]]*(#.*)?$/ { next }
        listed && /^[[:space:]]*-[[:space:]]/ { item = $0; sub(/^[[:space:]]*-[[:space:]]*/, "", item); print clean(item); exit }
        listed { exit }
        index($0, key ":") && $0 ~ "^[[:space:]]*" key ":" {
            rest = substr($0, index($0, key ":") + length(key) + 1)
            if (rest ~ /^[[:space:]]*\[/) { sub(/^[[:space:]]*\[/, "", rest); sub(/[],].*$/, "", rest); print clean(rest); exit }
            if (clean(rest) == "") { listed = 1; next }
            exit
        }
    ' "$1/Pulumi.$2.yaml"
}

# expand_home PATH: PATH with a leading ~/ made the home directory.
expand_home() {
    # shellcheck disable=SC2088 # the literal ~/ is what is matched
    case "$1" in
        "~/"*) printf '%s/%s\n' "$HOME" "${1#"~/"}" ;;
        *) printf '%s\n' "$1" ;;
    esac
}

# export_aws_cli_files CONFIG_FILE CREDENTIALS_FILE: point the AWS CLI at the stack's files (either
# may be empty), as AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE.
export_aws_cli_files() {
    if [ -n "$1" ]; then AWS_CONFIG_FILE=$(expand_home "$1"); export AWS_CONFIG_FILE; fi
    if [ -n "$2" ]; then AWS_SHARED_CREDENTIALS_FILE=$(expand_home "$2"); export AWS_SHARED_CREDENTIALS_FILE; fi
}

# The state backend: PULUMI_BACKEND_URL, else a file backend under the project.
default_backend() {
    printf '%s\n' "${PULUMI_BACKEND_URL:-file://$1/.pulumi-state}"
}

# check_pulumi_cli [PURPOSE]
check_pulumi_cli() {
    if ! command -v pulumi >/dev/null 2>&1; then
        echo "missing: the Pulumi CLI${1:+, $1}. Install it: curl -fsSL https://get.pulumi.com | sh (or see https://www.pulumi.com/docs/install/)" >&2
        missing=1
    fi
}

# check_aws_cli: the kubeconfigs of the cluster sign in with `aws eks get-token`; without the CLI,
# `up` fails at the first Kubernetes object, after the VPC, the cluster and the nodes.
check_aws_cli() {
    if ! command -v aws >/dev/null 2>&1; then
        echo "missing: the AWS CLI, with which the Kubernetes provider and kubectl sign in to the cluster ('aws eks get-token'). Install it: https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html" >&2
        missing=1
    fi
}

# check_passphrase BACKEND: the local backend keeps the stack's secrets encrypted with it.
check_passphrase() {
    case "$1" in
        file://*)
            if [ -z "${PULUMI_CONFIG_PASSPHRASE:-}" ] && [ -z "${PULUMI_CONFIG_PASSPHRASE_FILE:-}" ]; then
                echo "missing: PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE), the passphrase of the stack's secrets on the local backend. Choose one and export it (export PULUMI_CONFIG_PASSPHRASE='...'), and keep it: every later run of the stack needs the same" >&2
                missing=1
            fi ;;
    esac
}

# check_local_state BACKEND STACK: reading outputs needs a stack that `make up` created.
check_local_state() {
    case "$1" in
        file://*)
            if [ ! -d "${1#file://}" ]; then
                echo "missing: the stack's state: there is no ${1#file://}. Create the cluster first with 'make up STACK=$2', or set PULUMI_BACKEND_URL to the backend that holds the stack" >&2
                missing=1
            fi ;;
    esac
}

# check_kubectl
check_kubectl() {
    if ! command -v kubectl >/dev/null 2>&1; then
        echo "missing: kubectl. Install it: https://kubernetes.io/docs/tasks/tools/ (within one minor version of the cluster)" >&2
        missing=1
    fi
}

# check_kubeconfig_file FILE STACK: an explicitly named kubeconfig must exist.
check_kubeconfig_file() {
    if [ -n "$1" ] && [ ! -f "$1" ]; then
        echo "missing: the kubeconfig $1; write it with 'make kubeconfig STACK=$2'" >&2
        missing=1
    fi
}

# choose_kubeconfig FILE PROJECT_DIR STACK: print the kubeconfig to use: FILE if given, else
# none when KUBECONFIG is set, else the stack's from `make kubeconfig`, else none (kubectl's
# current context, said on stderr).
choose_kubeconfig() {
    if [ -n "$1" ]; then printf '%s\n' "$1"; return 0; fi
    if [ -n "${KUBECONFIG:-}" ]; then return 0; fi
    if [ -f "$2/build/kubeconfig-$3" ]; then printf '%s\n' "$2/build/kubeconfig-$3"; return 0; fi
    echo "note: no build/kubeconfig-$3 ('make kubeconfig STACK=$3' writes it) and no KUBECONFIG: using kubectl's current context" >&2
}
