/** The cluster token every in-process test coordinator takes, and the agents (real and fake) that speak to it. */
export const TEST_CLUSTER_TOKEN = 'test-cluster-token-0123456789';
