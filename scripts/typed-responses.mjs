#!/usr/bin/env node
// `npm run lint:typed-responses`: every route registered with `Api.route` (coordinator/src/api/http.ts)
// must answer a type the compiler knows (issue 41 item 2). `route` takes the handler's return type
// from the route's response schema, so the server is checked against its own OpenAPI document; this
// fails when a handler may answer `unknown`, `any` or a bare `Record<string, unknown>`: a route
// whose response schema (or the helper itself) has gone back to saying nothing of the answer.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const apiDir = path.join(root, 'coordinator/src/api');
const helper = path.join(apiDir, 'http.ts');

const config = ts.getParsedCommandLineOfConfigFile(
  path.join(root, 'tsconfig.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
);
if (!config) throw new Error('tsconfig.json could not be read');
const program = ts.createProgram({
  rootNames: ts.sys.readDirectory(apiDir, ['.ts']),
  options: { ...config.options, noEmit: true, incremental: false },
});
const checker = program.getTypeChecker();

/** Why `type` says nothing of an answer, or undefined when it says something. */
function vague(type) {
  if (type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return checker.typeToString(type);
  if (type.isUnion()) {
    for (const member of type.types) {
      const why = vague(member);
      if (why) return why;
    }
    return undefined;
  }
  // A map with no property of its own (Record<string, unknown>, { [k: string]: any }).
  const index = checker.getIndexInfoOfType(type, ts.IndexKind.String);
  if (index && checker.getPropertiesOfType(type).length === 0 && index.type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) {
    return checker.typeToString(type);
  }
  return undefined;
}

/** The `T` of `Promise<T>`, without the `undefined` a handler answers when it set the body itself. */
function answered(type) {
  const awaited = checker.getAwaitedType(type) ?? type;
  if (awaited.isUnion()) {
    const members = awaited.types.filter((t) => !(t.flags & ts.TypeFlags.Undefined));
    return members.length === 1 ? members[0] : checker.getUnionType(members);
  }
  return awaited;
}

const problems = [];
let routes = 0;
for (const source of program.getSourceFiles()) {
  if (!source.fileName.startsWith(apiDir + path.sep)) continue;
  const visit = (node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'route') {
      const declaration = checker.getResolvedSignature(node)?.getDeclaration();
      if (declaration && path.resolve(declaration.getSourceFile().fileName) === helper && node.arguments.length === 2) {
        routes++;
        const where = `${path.relative(root, source.fileName)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
        const handler = node.arguments[1];
        // What `route` lets the handler answer (its parameter's type here), and what the handler does answer.
        const expected = checker.getContextualType(handler);
        const allowed = expected?.getCallSignatures()[0]?.getReturnType();
        const given = checker.getTypeAtLocation(handler).getCallSignatures()[0]?.getReturnType();
        for (const [what, type] of [
          ['may answer', allowed],
          ['answers', given],
        ]) {
          const why = type ? vague(answered(type)) : 'nothing the compiler can read';
          if (why) problems.push(`${where}: the handler ${what} ${why}`);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

if (routes === 0) {
  console.error('typed-responses: no Api.route call found: has the helper moved? (scripts/typed-responses.mjs)');
  process.exit(1);
}
if (problems.length) {
  console.error(`Route handlers must answer their response schema's type (issue 41 item 2):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`typed-responses: ${routes} routes answer their response schema's type`);
