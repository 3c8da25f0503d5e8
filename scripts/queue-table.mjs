#!/usr/bin/env node
// `npm run lint:queue-table`: SQL that names the queue's table (`tasks`) lives in
// coordinator/src/tasks/ and nowhere else (issue 41 item 1). The queue's states, leases and fan-out
// are kept consistent by the statements there; a domain that reads or writes the table itself
// (its children, its free slots, its objects) holds a second copy of those rules. Domains ask the
// queue's module instead (childrenOf, freeSlots, leasedCountByAgent, ...).
//
// SQL is found as it is written here: in string and template literals (a template's `${...}` read as
// a placeholder), the ones holding an upper-case SQL verb. In those, the table is named after FROM,
// JOIN, UPDATE, INTO, TABLE or TRUNCATE (optionally ONLY, a `public.` schema, double quotes), or as a
// later member of a FROM list (`FROM agents a, tasks t`). `task_events`, `running_tasks` and the like
// are other names. Tests and benches read the tables as an outside observer would (psql), so they
// are not held to it.
import ts from 'typescript';
import { parsedSources, sourceFiles } from './lint-sources.mjs';

const OWNER = 'coordinator/src/tasks/';
const SQL_VERB = /\b(SELECT|UPDATE|INSERT|DELETE|WITH|TRUNCATE)\b/;
const TABLE = String.raw`(?:ONLY\s+)?(?:"?public"?\.)?"?tasks"?(?![\w$"])`;
const NAMED = new RegExp(String.raw`\b(?:FROM|JOIN|UPDATE|INTO|TABLE|TRUNCATE)\s+${TABLE}`, 'i');
// A later member of a FROM list: a comma, the table, then an alias, a comma, a clause or the end.
const LISTED = new RegExp(
  String.raw`\bFROM\s[^;]*?,\s*${TABLE}\s*(?:(?:AS\s+)?[a-z_]\w*\s*)?(?:,|\)|$|\b(?:WHERE|JOIN|GROUP|ORDER|LIMIT|FOR)\b)`,
  'i',
);

const files = sourceFiles(['*.ts', '*.tsx', '*.mjs', '*.js'])
  .filter(
    (f) => !f.startsWith(OWNER) && !f.startsWith('test/') && !f.startsWith('bench/') && !f.includes('/generated/') && !f.endsWith('.d.ts'),
  )
  .filter((f) => !f.includes('node_modules/') && !f.startsWith('coordinator/studio/dist/'));

/** The text of a literal as the database sees it, a template's substitutions read as `?`. */
function literalText(node) {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ? ');
  return undefined;
}

const found = [];
for (const { file, source } of parsedSources(files)) {
  const visit = (node) => {
    const sql = literalText(node);
    if (sql !== undefined && SQL_VERB.test(sql) && (NAMED.test(sql) || LISTED.test(sql))) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({ file, line, sql: sql.replace(/\s+/g, ' ').slice(0, 100) });
    }
    // A template's parts are read whole above, not one by one.
    if (!ts.isTemplateExpression(node)) ts.forEachChild(node, visit);
    else for (const span of node.templateSpans) visit(span.expression);
  };
  visit(source);
}

for (const f of found)
  console.error(`queue-table: ${f.file}:${f.line} names the tasks table outside ${OWNER}; ask the queue's module instead: ${f.sql}`);
process.exit(found.length ? 1 : 0);
