// The source files the code-reading lint scripts (function-length, queue-table, double-casts) walk:
// what git tracks or would track, each parsed by TypeScript's own parser.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Tracked and untracked-but-not-ignored files matching the git pathspecs, relative to the root. */
export function sourceFiles(patterns) {
  return execFileSync('git', ['ls-files', '-co', '--exclude-standard', ...patterns], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

/** Each file parsed, skipping files deleted in the working tree and (cheaply, before parsing) those without `mustContain`. */
export function* parsedSources(files, mustContain) {
  for (const file of files) {
    let text;
    try {
      text = readFileSync(path.join(root, file), 'utf8');
    } catch {
      continue; // deleted in the working tree
    }
    if (mustContain !== undefined && !text.includes(mustContain)) continue;
    yield {
      file,
      source: ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : undefined),
    };
  }
}
