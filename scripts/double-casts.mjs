#!/usr/bin/env node
// `npm run lint:double-casts`: no new `x as unknown as T` outside generated code (issue 41 item 1).
// The double cast tells the compiler to stop checking: a payload read that way is whatever the
// writer hoped. A value from outside is parsed by its schema (common/src/tasks/contracts.ts), a task's
// payload reaches its domain already parsed (withContract). The casts left are listed below, each at
// a library's edge or in code others are changing now; the check fails on any new one, and on a
// listed one that is gone (drop it from KNOWN, so the list only shrinks).
import ts from 'typescript';
import { parsedSources, sourceFiles } from './lint-sources.mjs';

/** `file` → how many double casts it still holds, and why they wait. */
const KNOWN = new Map([
  // zod's internals (`_zod.def`) are not in its public types.
  ['coordinator/src/api/http.ts', [2, 'zod internals; the route helper is issue 41 item 2']],
  ['common/src/api/unknown-fields.ts', [1, 'zod internals']],
  // koa's context as the tus server hands it over.
  ['coordinator/src/api/tus.ts', [1, 'tus hands over a bare koa context; issue 41 item 2']],
  // @grpc/proto-loader's untyped package meets its generated type.
  ['common/src/proto.ts', [1, 'grpc package definition meets its generated type']],
  // Node types a spawned child's extra stdio pipes as a fixed tuple of three.
  ['node-agent/src/reframe/frames.ts', [1, "child.stdio's fourth pipe (framing code, changed by others)"]],
  // The document build registers routes against a stand-in app, and hands openapi-typescript its document.
  ['scripts/openapi.ts', [2, 'stand-in app for route registration; openapi-typescript input']],
  // Tests that build what the types forbid on purpose, or reach into a private.
  ['test/helpers/fault-stack.ts', [1, 'test']],
  ['test/helpers/exit-when-done.ts', [1, 'test: process._getActiveHandles']],
  ['test/timeline-export.test.ts', [1, 'test: DOM NodeList']],
  ['test/task-fanout-final-part.test.ts', [1, 'test: a payload the contract forbids']],
  ['test/deploy-files.test.ts', [1, 'test: CommonJS default export']],
  ['test/task-queue.test.ts', [1, 'test: reads a private']],
  ['test/task-fanout.test.ts', [1, 'test: a child payload the contract refuses']],
]);

const files = sourceFiles(['*.ts', '*.tsx', '*.mts', '*.mjs']).filter(
  (f) => !f.includes('/generated/') && !f.endsWith('.d.ts') && !f.includes('node_modules/'),
);

const unwrap = (node) => (ts.isParenthesizedExpression(node) ? unwrap(node.expression) : node);
const isUnknownCast = (node) =>
  (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && node.type.kind === ts.SyntaxKind.UnknownKeyword;

const counts = new Map();
const lines = new Map();
for (const { file, source } of parsedSources(files, 'unknown')) {
  const visit = (node) => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && isUnknownCast(unwrap(node.expression))) {
      counts.set(file, (counts.get(file) ?? 0) + 1);
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      lines.set(file, [...(lines.get(file) ?? []), line]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

let failed = false;
for (const [file, n] of counts) {
  const known = KNOWN.get(file)?.[0] ?? 0;
  if (n > known) {
    failed = true;
    console.error(
      `double-casts: ${file} has ${n} \`as unknown as\` (lines ${lines.get(file).join(', ')}), ${known} allowed: parse the value by its schema or type it where it comes from`,
    );
  }
}
for (const [file, [n]] of KNOWN) {
  const now = counts.get(file) ?? 0;
  if (now < n) {
    failed = true;
    console.error(`double-casts: ${file} holds ${now} double casts now, ${n} listed: lower its count in KNOWN (or drop it)`);
  }
}
process.exit(failed ? 1 : 0);
