import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import { repoRoot } from './paths.js';

/** Loads shorts.v1 with the options both sides share (camelCase off: field names as on the wire). */
export function loadAgentProto(): { AgentService: grpc.ServiceClientConstructor } {
  const def = protoLoader.loadSync(path.join(repoRoot(), 'protos', 'shorts/v1/agent.proto'), {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as any;
  return { AgentService: pkg.shorts.v1.AgentService };
}
