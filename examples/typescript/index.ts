// The dev stack of this project as a TypeScript program using the component package.
// `pulumi install` (or `pulumi package add ../../provider`) generates @pulumi/eks-autoscaling in sdks/.
import * as eksAutoscaling from "@pulumi/eks-autoscaling";

const autoscaling = new eksAutoscaling.EksAutoscaling("autoscaling", {
    clusterName: "karpenter-test",
    cluster: {
        // The reference setup reaches the API server from anywhere; restrict publicAccessCidrs
        // to your own addresses for anything but a short-lived test cluster.
        acknowledgeOpenEndpoint: true,
    },
    app: {
        // The test app's ALB is open to every address for a short-lived test; list your
        // addresses in inboundCidrs (or set scheme: "internal") to narrow it.
        ingress: { acknowledgeOpenToInternet: true },
    },
    capacity: {
        // On-demand Linux price of m5.large in Tokyo: the bundled catalog has us-east-1 prices only.
        priceOverrides: { "m5.large": 0.124 },
    },
});

export const clusterName = autoscaling.clusterName;
export const kubeconfig = autoscaling.kubeconfig;
export const albHostname = autoscaling.albHostname;
export const nodePoolLimits = autoscaling.nodePoolLimits;
export const capacityPlan = autoscaling.capacityPlan;
