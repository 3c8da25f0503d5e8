#!/usr/bin/env node
// `npm run lint:double-casts`: no `x as unknown as T` outside generated code (issue 41 item 1).
// The double cast tells the compiler to stop checking: a payload read that way is whatever the
// writer hoped. A value from outside is parsed by its schema (common/src/tasks/contracts.ts), a task's
// payload reaches its domain already parsed (withContract); at a library's edge a type guard or the
// library's own classes check what arrives (zod's `instanceof z.core.$Zod…`, the gRPC service in
// common/src/proto.ts), and a test that needs a value its contract refuses builds one the types
// allow but the schema does not. None is left, so the check fails on any double cast.
import ts from 'typescript';
import { parsedSources, sourceFiles } from './lint-sources.mjs';

/** `file` → [how many double casts it may hold, why it waits]: none now (issue 41 item 1 removed the last). */
const KNOWN = new Map([]);

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
