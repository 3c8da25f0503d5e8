import net from 'node:net';

/**
 * A TCP load balancer with failover, as a farm puts in front of its coordinators: each new
 * connection goes to the first backend in the list that accepts it, so a dead backend is skipped.
 */
export interface Balancer {
  address: string;
  port: number;
  close(): Promise<void>;
}

export async function startBalancer(backends: Array<{ host: string; port: number }>): Promise<Balancer> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const connectFirst = (i: number, client: net.Socket) => {
    if (i >= backends.length || client.destroyed) return client.destroy();
    const upstream = net.connect(backends[i]!.port, backends[i]!.host);
    upstream.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED' && !upstream.bytesRead) connectFirst(i + 1, client);
      else client.destroy();
    });
    upstream.once('connect', () => {
      track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      upstream.on('error', () => client.destroy()).on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
      client.resume();
    });
  };
  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    track(client);
    client.on('error', () => undefined);
    connectFirst(0, client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    address: `127.0.0.1:${port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
