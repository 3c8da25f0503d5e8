// Kubernetes NetworkPolicy semantics, enough to ask of the manifests "can A open port P on B?":
// pod and namespace selectors (matchLabels, matchExpressions), ipBlock with except (IPv4), named and
// numbered ports, policy types. A pod that no policy of a direction selects is open in that direction.

export interface Endpoint {
  /** Set for pods; an endpoint without one is outside the cluster and matches ipBlock peers only. */
  namespace?: string;
  labels?: Record<string, string>;
  ip: string;
  /** Container port names to numbers, for policies that name ports. */
  ports?: Record<string, number>;
}

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}
interface Peer {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface PortRule {
  port?: number | string;
  endPort?: number;
  protocol?: string;
}
interface Rule {
  from?: Peer[];
  to?: Peer[];
  ports?: PortRule[];
}
export interface NetworkPolicy {
  metadata: { name: string; namespace: string };
  spec: { podSelector: Selector; policyTypes?: string[]; ingress?: Rule[]; egress?: Rule[] };
}

function selects(selector: Selector, labels: Record<string, string> = {}): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case 'In':
        return key in labels && values.includes(labels[key]!);
      case 'NotIn':
        return !(key in labels) || !values.includes(labels[key]!);
      case 'Exists':
        return key in labels;
      case 'DoesNotExist':
        return !(key in labels);
    }
  });
  return byLabel && byExpression;
}

function ipv4(ip: string): number | null {
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const a = ipv4(ip);
  const b = ipv4(base!);
  if (a === null || b === null) return false; // IPv6 blocks never hold an IPv4 address
  const size = 2 ** (32 - Number(bits));
  return Math.floor(a / size) === Math.floor(b / size);
}

function peerMatches(peer: Peer, policyNamespace: string, other: Endpoint): boolean {
  if (peer.ipBlock) return inCidr(other.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c) => inCidr(other.ip, c));
  if (!other.namespace) return false;
  const namespaceLabels = { 'kubernetes.io/metadata.name': other.namespace };
  const namespaceOk = peer.namespaceSelector ? selects(peer.namespaceSelector, namespaceLabels) : other.namespace === policyNamespace;
  return namespaceOk && (peer.podSelector ? selects(peer.podSelector, other.labels) : true);
}

function portMatches(rules: PortRule[] | undefined, destination: Endpoint, port: number, protocol: string): boolean {
  if (!rules?.length) return true;
  return rules.some((r) => {
    if ((r.protocol ?? 'TCP') !== protocol) return false;
    if (r.port === undefined) return true;
    const number = typeof r.port === 'number' ? r.port : destination.ports?.[r.port];
    return number !== undefined && port >= number && port <= (r.endPort ?? number);
  });
}

const typesOf = (p: NetworkPolicy) => p.spec.policyTypes ?? (p.spec.egress ? ['Ingress', 'Egress'] : ['Ingress']);

/** Whether `source` may open `port` on `destination` under these policies (both directions checked). */
export function allowed(policies: NetworkPolicy[], source: Endpoint, destination: Endpoint, port: number, protocol = 'TCP'): boolean {
  const direction = (pod: Endpoint, type: 'Ingress' | 'Egress', other: Endpoint) => {
    if (!pod.namespace) return true;
    const applying = policies.filter(
      (p) => p.metadata.namespace === pod.namespace && typesOf(p).includes(type) && selects(p.spec.podSelector, pod.labels),
    );
    if (!applying.length) return true;
    return applying.some((p) =>
      (type === 'Ingress' ? p.spec.ingress : p.spec.egress)?.some((rule) => {
        const peers = type === 'Ingress' ? rule.from : rule.to;
        return (
          (!peers?.length || peers.some((peer) => peerMatches(peer, p.metadata.namespace, other))) &&
          portMatches(rule.ports, destination, port, protocol)
        );
      }),
    );
  };
  return direction(source, 'Egress', destination) && direction(destination, 'Ingress', source);
}
