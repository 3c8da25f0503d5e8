// The agent protocol's front door: a call without the cluster token is refused from its headers,
// before its (possibly huge) message is read; an agent with the token may still send the large
// analysis results the protocol allows.
import test, { type ExecutionContext } from 'ava';
import * as grpc from '@grpc/grpc-js';
import net from 'node:net';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { CoordinatorClient } from '../node-agent/src/coordinator-client.js';
import { TEST_CLUSTER_TOKEN } from './helpers/cluster-token.js';

let cluster: TestCluster;
test.before(async () => {
  cluster = await startCluster('grpc_auth');
});
test.after.always(async () => {
  await cluster?.close();
});

/** A TCP relay to the coordinator's gRPC port that counts the bytes the client sent through it. */
async function countingRelay(t: ExecutionContext, target: string): Promise<{ address: string; sent: () => number }> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  let sent = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      sent += chunk.length;
    });
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`, sent: () => sent };
}

const BIG = 24 * 1024 * 1024;

test.serial('a call with a wrong cluster token is refused before its 24 MiB message is read', async (t) => {
  const relay = await countingRelay(t, cluster.app.grpcAddress);
  const stranger = new CoordinatorClient(relay.address, 'not-the-cluster-token-000000');
  t.teardown(() => stranger.close());
  const err = await t.throwsAsync<grpc.ServiceError>(
    stranger.call('CompleteTask', { task_id: 'x', lease_token: 'y', result_json: 'a'.repeat(BIG) }, { retryForMs: 0 }),
  );
  t.is(err!.code, grpc.status.UNAUTHENTICATED);
  t.regex(err!.details, /invalid cluster token/);
  t.true(relay.sent() < 1024 * 1024, `the stranger got ${relay.sent()} bytes through, not its whole message`);
});

test.serial('an agent with the token may send a message of that size (analysis results are large)', async (t) => {
  const relay = await countingRelay(t, cluster.app.grpcAddress);
  const agent = new CoordinatorClient(relay.address, TEST_CLUSTER_TOKEN);
  t.teardown(() => agent.close());
  const err = await t.throwsAsync<grpc.ServiceError>(
    agent.call('CompleteTask', { task_id: 'no-such-task', lease_token: 'y', result_json: 'a'.repeat(BIG) }, { retryForMs: 0 }),
  );
  // Read, decoded and answered by the handler: the task is unknown, not the caller nor the size.
  t.not(err!.code, grpc.status.UNAUTHENTICATED);
  t.not(err!.code, grpc.status.RESOURCE_EXHAUSTED);
  t.true(relay.sent() > BIG, `${relay.sent()} bytes went through`);
});

test.serial('a call with no token at all is refused the same way', async (t) => {
  const { AgentService } = await import('@shorts/common/proto').then((m) => m.loadAgentProto());
  const client = new AgentService(cluster.app.grpcAddress, grpc.credentials.createInsecure());
  t.teardown(() => client.close());
  const err = await new Promise<grpc.ServiceError | null>((resolve) =>
    client.Heartbeat({ agent_id: 'x' }, (e: grpc.ServiceError | null) => resolve(e)),
  );
  t.is(err?.code, grpc.status.UNAUTHENTICATED);
});
