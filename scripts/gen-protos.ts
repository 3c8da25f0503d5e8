// Generates the TypeScript types of protos/ into common/src/generated/ (or the folder given), with
// the options the loader uses at run time. `npm run protos`; a test fails when the committed copy is stale.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { AGENT_PROTO_FILE, PROTO_LOAD_OPTIONS } from '@shorts/common/proto';
import { repoRoot } from '@shorts/common/paths';

const root = repoRoot();
const outDir = path.resolve(process.argv[2] ?? path.join(root, 'common/src/generated'));
const o = PROTO_LOAD_OPTIONS;
rmSync(outDir, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [
    path.join(root, 'node_modules/@grpc/proto-loader/build/bin/proto-loader-gen-types.js'),
    AGENT_PROTO_FILE,
    ...(o.keepCase ? ['--keepCase'] : []),
    `--longs=${o.longs.name}`,
    `--enums=${o.enums.name}`,
    ...(o.defaults ? ['--defaults'] : []),
    ...(o.oneofs ? ['--oneofs'] : []),
    '--grpcLib=@grpc/grpc-js',
    '--includeComments',
    '--importFileExtension=.js',
    '-O',
    outDir,
    '-I',
    'protos',
  ],
  { cwd: root, stdio: 'inherit' },
);
