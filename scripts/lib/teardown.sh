# shellcheck shell=sh
# Before `pulumi destroy`: let Karpenter take down the nodes it launched, which Pulumi's state does
# not hold. After a failed or partial `up`, the program's deletion order may not exist yet, and a
# cluster deleted under running NodeClaims leaves their instances running. Sourced by stack.sh.

# The stack configuration's defaults (stackconfig/), for a stack whose file does not set them.
DEFAULT_CLUSTER_NAME=karpenter-test
DEFAULT_APP_NAMESPACE=test-app

# confirm_destroy STACK: return 0 only with the operator's consent, before anything is deleted: YES=1
# (or stack.sh --yes, or --yes in PULUMI_ARGS), or the stack's name typed at the prompt. Without a
# terminal to ask on and without YES, it refuses (2).
confirm_destroy() {
    case "${YES:-}" in 1|yes|true) return 0 ;; esac
    case " ${PULUMI_ARGS:-} " in *" --yes "*|*" -y "*) return 0 ;; esac
    if [ ! -t 0 ]; then
        echo "error: destroying stack '$1' deletes its cluster, its nodes, its VPC and everything in them, so it asks first, and there is no terminal to ask on. Say yes beforehand: YES=1 make destroy STACK=$1 (or scripts/stack.sh --yes destroy $1)" >&2
        return 2
    fi
    echo "Stack '$1' (Pulumi.$1.yaml) is about to be destroyed: the app's Deployments and every NodePool"
    echo "first, and Karpenter's nodes with them, then the cluster, its system nodes, the load balancers,"
    echo "the IAM roles and the VPC. Nothing has been deleted yet."
    printf "Type the stack's name (%s) to destroy it: " "$1"
    answer=""
    read -r answer || answer=""
    if [ "$answer" != "$1" ]; then
        echo "Nothing was deleted."
        return 1
    fi
}

# drain_karpenter_nodes STACK: when the cluster answers, delete the app's Deployments and every
# NodePool, then wait until no NodeClaim is left. Returns 1 only when NodeClaims outlive the wait;
# an unreachable cluster or a stack without outputs is said, with what to check in AWS, and is no
# reason to stop.
drain_karpenter_nodes() {
    stack=$1
    timeout=${DESTROY_NODECLAIM_TIMEOUT:-900}
    interval=${DESTROY_POLL_SECONDS:-10}
    case "$timeout$interval${DESTROY_LOG_GROUP_WAIT:-120}" in
        *[!0-9]*) fail "DESTROY_NODECLAIM_TIMEOUT, DESTROY_POLL_SECONDS and DESTROY_LOG_GROUP_WAIT are whole seconds, got '$timeout', '$interval' and '${DESTROY_LOG_GROUP_WAIT:-120}'" ;;
    esac
    region=$(pulumi config get aws:region --stack "$stack" 2>/dev/null) || region=""
    # The AWS CLI signs in as the program's provider does: the stack's profile and role, if any.
    profile=$(pulumi config get aws:profile --stack "$stack" 2>/dev/null) || profile=""
    role_arn=$(pulumi config get --path 'aws:assumeRoles[0].roleArn' --stack "$stack" 2>/dev/null) || role_arn=""
    if cluster=$(pulumi stack output clusterName --stack "$stack" 2>/dev/null) && [ -n "$cluster" ]; then
        has_outputs=1
        vpc=$(pulumi stack output vpcId --stack "$stack" 2>/dev/null) || vpc=""
    else
        vpc=""
        has_outputs=0
        cluster=$(pulumi config get eks-autoscaling:clusterName --stack "$stack" 2>/dev/null) || cluster=$DEFAULT_CLUSTER_NAME
        echo "note: stack '$stack' has no outputs: its 'up' failed or never finished."
    fi
    if ! command -v kubectl >/dev/null 2>&1; then
        echo "note: no kubectl on PATH, so the NodePools cannot be deleted before the stack."
        print_leftover_checks "$cluster" "$region" "$profile" "$vpc"
        return 0
    fi

    kubeconfig=$(mktemp)
    if ! write_kubeconfig "$stack" "$cluster" "$region" "$kubeconfig" "$has_outputs" "$profile" "$role_arn" \
        || ! kubectl --kubeconfig "$kubeconfig" --request-timeout=20s get namespace kube-system -o name >/dev/null 2>&1; then
        rm -f "$kubeconfig"
        echo "note: cannot reach the API server of cluster '$cluster' (or it does not exist), so the NodePools cannot be deleted before the stack."
        print_leftover_checks "$cluster" "$region" "$profile" "$vpc"
        return 0
    fi
    kube() { kubectl --kubeconfig "$kubeconfig" --request-timeout=20s "$@"; }

    if ! kube get crd nodeclaims.karpenter.sh -o name >/dev/null 2>&1; then
        echo "Cluster '$cluster' has no Karpenter resources: no nodes of Karpenter's to wait for."
        rm -f "$kubeconfig"
        return 0
    fi
    namespace=$(pulumi config get --path eks-autoscaling:app.namespace --stack "$stack" 2>/dev/null) || namespace=$DEFAULT_APP_NAMESPACE
    # The app's pods first, as the program's own order has it: with them still running, the
    # drain of their nodes would wait on their PodDisruptionBudget for ever.
    echo "Deleting the Deployments of namespace $namespace and every NodePool of cluster '$cluster'..."
    kube delete deployments --all --namespace "$namespace" --wait=false --ignore-not-found
    kube delete nodepools.karpenter.sh --all --wait=false

    start=$(date +%s)
    while :; do
        if claims=$(kube get nodeclaims.karpenter.sh -o name 2>/dev/null); then
            claims=$(printf '%s\n' "$claims" | sed -n 's|^nodeclaim[^/]*/||p' | tr '\n' ' ')
            if [ -z "$claims" ]; then
                echo "Karpenter's nodes are gone."
                rm -f "$kubeconfig"
                return 0
            fi
            count=$(printf '%s' "$claims" | wc -w | tr -d ' ')
        else
            count="?"
            claims="(the API server did not answer)"
        fi
        elapsed=$(($(date +%s) - start))
        if [ "$elapsed" -ge "$timeout" ]; then break; fi
        echo "waiting for $count NodeClaim(s) to terminate (${elapsed}s of ${timeout}s): $claims"
        sleep "$interval"
    done
    rm -f "$kubeconfig"
    cat >&2 <<EOF
error: after ${timeout}s, $count NodeClaim(s) of cluster '$cluster' are still there: $claims
Karpenter has not drained or terminated their nodes; the stack is left as it is. Check, with
'make kubeconfig STACK=$stack' and KUBECONFIG=build/kubeconfig-$stack:
  kubectl get nodeclaims -o wide                      # their conditions say what waits
  kubectl -n kube-system get deploy karpenter         # the controller must run to finish them
  kubectl -n kube-system logs deploy/karpenter --tail=100
  kubectl get pdb -A                                  # a budget that allows no eviction blocks a drain,
                                                      # as does a pod annotated karpenter.sh/do-not-disrupt
Then run 'make destroy STACK=$stack' again (DESTROY_NODECLAIM_TIMEOUT=<seconds> waits longer).
docs/teardown.md says how to finish by hand.
EOF
    return 1
}

# write_kubeconfig STACK CLUSTER REGION FILE HAS_OUTPUTS PROFILE ROLE_ARN: the stack's kubeconfig
# output, or, for a stack without outputs, one the AWS CLI writes for the cluster if it exists,
# signing in with the stack's profile and role as the stack's own kubeconfig does.
write_kubeconfig() {
    if [ "$5" -eq 1 ]; then
        (umask 077 && pulumi stack output kubeconfig --show-secrets --stack "$1" >"$4" 2>/dev/null) \
            && grep -q -e '"clusters"' -e '^clusters:' "$4"
    else
        aws eks update-kubeconfig --name "$2" ${3:+--region "$3"} ${6:+--profile "$6"} ${7:+--role-arn "$7"} \
            --kubeconfig "$4" >/dev/null 2>&1
    fi
}

# remove_recreated_log_group STACK CLUSTER REGION PROFILE ROLE_ARN: after pulumi destroy. The stack
# deletes the control plane's log group after the cluster, but EKS may still deliver the last log
# lines then, and creates the group again (with no expiry) to hold them; the next `up` of a cluster
# of that name then fails on the existing group. Watch for DESTROY_LOG_GROUP_WAIT seconds and
# delete it whenever it appears. Never fails the destroy: it says what to run instead.
remove_recreated_log_group() {
    log_types=$(pulumi config get --path eks-autoscaling:cluster.logTypes --stack "$1" 2>/dev/null) || log_types=""
    case "$log_types" in
        # No control-plane logs: EKS writes no group, and one of that name is not the stack's.
        "[]"|"[ ]") return 0 ;;
    esac
    group="/aws/eks/$2/cluster"
    wait_seconds=${DESTROY_LOG_GROUP_WAIT:-120}
    interval=${DESTROY_POLL_SECONDS:-10}
    log_region=$3 log_profile=$4 role_key="" role_secret="" role_token=""
    by_hand="aws logs delete-log-group --log-group-name $group${3:+ --region $3}${4:+ --profile $4}"
    # As the stack's provider signs in: with its role's credentials, when it assumes one.
    if [ -n "$5" ]; then
        if ! credentials=$(aws ${4:+--profile "$4"} sts assume-role --role-arn "$5" \
            --role-session-name eks-autoscaling-teardown \
            --query 'Credentials.[AccessKeyId,SecretAccessKey,SessionToken]' --output text 2>/dev/null); then
            echo "note: could not assume $5 to look for the log group $group; if EKS creates it again, delete it: $by_hand"
            return 0
        fi
        # shellcheck disable=SC2086 # three words: key, secret, token
        set -- $credentials
        role_key=${1:-} role_secret=${2:-} role_token=${3:-}
    fi
    echo "Watching ${wait_seconds}s for $group, which EKS creates again when the cluster's last log lines arrive late..."
    start=$(date +%s)
    while :; do
        if ! found=$(stack_logs describe-log-groups --log-group-name-prefix "$group" \
            --query "logGroups[?logGroupName=='$group'].logGroupName" --output text 2>/dev/null); then
            echo "note: could not look for the log group $group; if it is there, delete it: $by_hand"
            return 0
        fi
        if [ "$found" = "$group" ]; then
            if stack_logs delete-log-group --log-group-name "$group" >/dev/null 2>&1; then
                echo "Deleted the log group $group, which EKS had created again after the destroy."
            else
                echo "note: could not delete the log group $group, which EKS created again after the destroy; delete it before the next 'make up': $by_hand"
                return 0
            fi
        fi
        if [ $(($(date +%s) - start)) -ge "$wait_seconds" ]; then break; fi
        sleep "$interval"
    done
}

# stack_logs ARGS...: `aws logs ARGS` as remove_recreated_log_group signs in: its region, and its
# profile or its role's credentials.
stack_logs() {
    if [ -n "$role_key" ]; then
        AWS_ACCESS_KEY_ID=$role_key AWS_SECRET_ACCESS_KEY=$role_secret AWS_SESSION_TOKEN=$role_token \
            aws ${log_region:+--region "$log_region"} logs "$@"
    else
        aws ${log_region:+--region "$log_region"} ${log_profile:+--profile "$log_profile"} logs "$@"
    fi
}

# print_leftover_checks CLUSTER REGION [PROFILE] [VPC]: how to find, by tag, what Karpenter may have
# left in AWS, and the network interfaces that would keep the VPC from being deleted (VPC: its id, when
# the stack's outputs have it; otherwise the command that finds it by the stack's tag).
print_leftover_checks() {
    region_option=${2:+ --region $2}${3:+ --profile $3}
    if [ -n "${4:-}" ]; then
        vpc_id=$4
    else
        vpc_id="\$(aws ec2 describe-vpcs$region_option --filters Name=tag:eks-autoscaling:cluster,Values=$1 --query 'Vpcs[].VpcId' --output text)"
    fi
    cat <<EOF
Instances Karpenter launched are not in the stack's state. If the cluster ever ran Karpenter's
nodes, check AWS for leftovers once the destroy has run (docs/teardown.md, "Leftovers in AWS",
says how to delete them):
  aws ec2 describe-instances$region_option --filters "Name=tag:eks:eks-cluster-name,Values=$1" "Name=tag-key,Values=karpenter.sh/nodepool" "Name=instance-state-name,Values=pending,running,stopping,stopped" --query 'Reservations[].Instances[].InstanceId' --output text
  aws ec2 describe-launch-templates$region_option --filters "Name=tag:eks:eks-cluster-name,Values=$1" --query 'LaunchTemplates[].LaunchTemplateName' --output text
  aws iam list-instance-profiles${3:+ --profile $3} --path-prefix "/karpenter/${2:-<region>}/$1/" --query 'InstanceProfiles[].InstanceProfileName' --output text
  aws ec2 describe-security-groups$region_option --filters "Name=tag:karpenter.sh/discovery,Values=$1" --query 'SecurityGroups[].GroupId' --output text
  aws resourcegroupstaggingapi get-resources$region_option --tag-filters "Key=eks-autoscaling:cluster,Values=$1" --query 'ResourceTagMappingList[].ResourceARN'
Network interfaces left in the VPC keep it, its subnets and security groups from being deleted: the
VPC CNI's (tagged with the cluster's name), and those of endpoints another service put there (such
as GuardDuty's, with its own security group). List them by VPC and by tag:
  aws ec2 describe-network-interfaces$region_option --filters "Name=vpc-id,Values=$vpc_id" --query 'NetworkInterfaces[].[NetworkInterfaceId,Status,InterfaceType,Description]' --output text
  aws ec2 describe-network-interfaces$region_option --filters "Name=tag:cluster.k8s.amazonaws.com/name,Values=$1" --query 'NetworkInterfaces[].[NetworkInterfaceId,Status,Description]' --output text
Delete each one that is "available":
  aws ec2 delete-network-interface$region_option --network-interface-id <eni id>
One that is "in-use" belongs to something that still exists: delete that instead (a VPC endpoint:
aws ec2 delete-vpc-endpoints$region_option --vpc-endpoint-ids <endpoint id>, then its security group).
Continuing with pulumi destroy.
EOF
}
