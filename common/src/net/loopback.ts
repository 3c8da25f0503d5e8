// Plain-text gRPC is allowed without a second thought only where the bytes never leave the host.
const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|\[::1\]|localhost)$/i;

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host);
}

/** The host part of a gRPC target: `host:port`, `[v6]:port`, `dns:///host:port`, or a bare host. */
export function grpcTargetHost(target: string): string {
  const address = target.replace(/^(dns|ipv4|ipv6):(\/\/[^/]*\/)?/i, '');
  if (address.startsWith('[')) return address.slice(0, address.indexOf(']') + 1);
  const colons = address.split(':').length - 1;
  return colons === 1 ? address.slice(0, address.indexOf(':')) : address;
}
