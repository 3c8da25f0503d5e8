#!/usr/bin/env node
// `npm run lint:option-rules`: each job or render option with rules of its own is declared, checked
// and read in its own modules of common/src/options/ and nowhere else (issue 41 item 3). Elsewhere a copy
// of its schema, its type or its reading drifts from the one the request was checked with: a
// `removeSilences` read as "truthy" here and as "true or an object" there, a short's limits checked
// in one place with one message and in another with a second.
//
// Outside an option's modules (tests and benches aside, which build requests as clients do) the check
// fails on:
// - a zod schema for one of its fields (a property or a constant of that name built from `z.`);
// - a type for it: an interface or type alias of its type's name, or a property of its name whose
//   type is spelt out (`{ ... }`) instead of naming the module's type;
// - a read of a field that only its resolver reads (`x.removeSilences`), but for the flags the
//   resolver hands out (`jumpCuts.removeSilences`, what a render list shows);
// - one of its validation messages (a string starting `options.predefinedShorts`).
import ts from 'typescript';
import { parsedSources, sourceFiles } from './lint-sources.mjs';

const OPTIONS = [
  {
    modules: ['common/src/options/predefined-shorts.ts'],
    fields: ['predefinedShorts'],
    types: /^PredefinedShorts?$/,
    message: /^options\.predefinedShorts\b/,
  },
  {
    // The schema, and its zod-free type and rules (which the studio imports without zod).
    modules: ['common/src/options/editing.ts', 'common/src/options/editing-rules.ts'],
    fields: ['editing', 'removeSilences', 'removeFillers'],
    types: /^(EditingOptions|EditingRules|JumpCutFlags)$/,
    // Read by resolveEditing only; `jumpCuts` holds the flags it resolved to.
    resolvedOnly: ['removeSilences', 'removeFillers'],
    resolvedHolder: 'jumpCuts',
  },
];

const files = sourceFiles([
  'common/src/*.ts',
  'coordinator/src/*.ts',
  'node-agent/src/*.ts',
  'coordinator/studio/src/*.ts',
  'coordinator/studio/src/*.tsx',
])
  // The OpenAPI types are generated from the modules' schemas.
  .filter(
    (f) => !f.includes('/generated/') && f !== 'common/src/openapi/generated.ts' && !f.endsWith('.d.ts') && !f.includes('node_modules/'),
  );

/** A field's name, or a constant named for its schema (`editingSchema`, `predefinedShortSchema`). */
const namesField = (fields, name) =>
  name !== undefined && fields.some((f) => name === f || name === `${f}Schema` || name === `${f.replace(/s$/, '')}Schema`);
const nameOf = (node) => (node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) ? node.name.text : undefined);

/** Whether an expression is built from zod: a call chain whose root is `z`. */
function fromZod(node) {
  let n = node;
  for (;;) {
    if (ts.isCallExpression(n) || ts.isPropertyAccessExpression(n) || ts.isParenthesizedExpression(n)) n = n.expression;
    else return ts.isIdentifier(n) && n.text === 'z';
  }
}

/** Whether a type node spells out an object type anywhere in it (`{ ... }`, `Array<{ ... }>`, `{ ... } | null`). */
function spellsObject(type) {
  let found = false;
  const visit = (n) => {
    if (ts.isTypeLiteralNode(n)) found = true;
    else ts.forEachChild(n, visit);
  };
  visit(type);
  return found;
}

function literalText(node) {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text;
  return undefined;
}

const found = [];
for (const { file, source } of parsedSources(files)) {
  const rules = OPTIONS.filter((o) => !o.modules.includes(file));
  const report = (node, what) => found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
  const visit = (node) => {
    for (const o of rules) {
      const name = nameOf(node);
      if (
        (ts.isPropertyAssignment(node) || ts.isVariableDeclaration(node)) &&
        namesField(o.fields, name) &&
        node.initializer &&
        fromZod(node.initializer)
      )
        report(node, `a zod schema for \`${name}\`: use the one in ${o.modules[0]}`);
      if (
        (ts.isPropertySignature(node) || ts.isPropertyDeclaration(node)) &&
        o.fields.includes(name) &&
        node.type &&
        spellsObject(node.type)
      )
        report(node, `\`${name}\` typed by hand: name the type ${o.modules.at(-1)} exports`);
      if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && o.types.test(name))
        report(node, `type \`${name}\` declared again: import it from ${o.modules.at(-1)}`);
      if (ts.isPropertyAccessExpression(node) && o.resolvedOnly?.includes(node.name.text)) {
        const holder = node.expression;
        const holderName = ts.isIdentifier(holder) ? holder.text : ts.isPropertyAccessExpression(holder) ? holder.name.text : undefined;
        if (holderName !== o.resolvedHolder)
          report(
            node,
            `\`${node.name.text}\` read directly: resolve the option with ${o.modules.at(-1)} (resolveEditing, cutsSilences, jumpCutFlags)`,
          );
      }
      const text = o.message && literalText(node);
      if (text !== undefined && o.message?.test(text))
        report(node, `a message of \`${o.fields[0]}\`'s rules: they are checked in ${o.modules[0]}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

for (const f of found) console.error(`option-rules: ${f}`);
process.exit(found.length ? 1 : 0);
