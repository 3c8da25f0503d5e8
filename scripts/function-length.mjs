#!/usr/bin/env node
// `npm run lint:function-length`: no function over MAX_LINES lines outside tests (issue 41). A long
// closure (a register-routes function, a service factory, a CLI's main) is where a change costs the
// most to read; one route, command or component per file keeps each short. The functions still over
// the limit are listed below with the issue item they wait for, so the check fails on any new one.
import ts from 'typescript';
import { parsedSources, sourceFiles } from './lint-sources.mjs';

const MAX_LINES = 120;

/** `file:function` still over the limit, and why it waits: none now (issue 41 item 4 split the last). */
const KNOWN = new Map([]);

const files = sourceFiles(['*.ts', '*.tsx', '*.mjs']).filter(
  (f) => !f.startsWith('test/') && !f.includes('/generated/') && !f.endsWith('.d.ts'),
);

function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name && (ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name))) return node.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && (ts.isIdentifier(parent.name) || ts.isStringLiteral(parent.name)))
    return parent.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return undefined;
}

const over = [];
for (const { file, source } of parsedSources(files)) {
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const last = source.getLineAndCharacterOfPosition(node.end).line + 1;
      const lines = last - first + 1;
      if (lines > MAX_LINES) over.push({ file, line: first, name: nameOf(node) ?? `<anonymous at line ${first}>`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

const fresh = over.filter((f) => !KNOWN.has(`${f.file}:${f.name}`));
const seen = new Set(over.map((f) => `${f.file}:${f.name}`));
for (const key of KNOWN.keys())
  if (!seen.has(key)) console.log(`function-length: ${key} is no longer over ${MAX_LINES} lines; drop it from KNOWN`);
if (process.argv.includes('--verbose'))
  for (const f of over.filter((o) => KNOWN.has(`${o.file}:${o.name}`)))
    console.log(`function-length: known: ${f.file}:${f.line} ${f.name} (${f.lines} lines; waits for ${KNOWN.get(`${f.file}:${f.name}`)})`);
for (const f of fresh) console.error(`function-length: ${f.file}:${f.line} ${f.name} is ${f.lines} lines (at most ${MAX_LINES})`);
process.exit(fresh.length ? 1 : 0);
