import path from 'node:path';
import ts from 'typescript';
import { repoRoot } from '@shorts/common/paths';

/**
 * What `kubeconform -strict` adds to a schema check: a field the Kubernetes API does not know (a
 * misspelt `allowPrivilegeEscalaton` is silently dropped by the API server) is an error. Each
 * manifest becomes an object literal typed with its kubernetes-models interface, and the TypeScript
 * compiler's excess-property and type checks report the fields that do not belong, by manifest.
 */
export function strictTypeErrors(docs: Array<{ apiVersion: string; kind: string }>): string[][] {
  const root = repoRoot();
  // Beside the sources, so that kubernetes-models resolves from the repository's node_modules.
  const file = path.join(root, 'test', '.k8s-manifests.generated.ts');
  const source = docs
    .map((doc, i) => {
      const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : ['', doc.apiVersion];
      return (
        `import type { I${doc.kind} as T${i} } from 'kubernetes-models/${group ? `${group}/` : ''}${version}/${doc.kind}';\n` +
        `export const m${i}: T${i} = ${JSON.stringify(doc)};\n`
      );
    })
    .join('');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    path.resolve(name) === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => path.resolve(name) === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const errors: string[][] = docs.map(() => []);
  const lines = source.split('\n');
  for (const d of ts.getPreEmitDiagnostics(program, program.getSourceFile(file))) {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
    const index = Number(lines[line]?.match(/^(?:import type \{ I\w+ as T|export const m)(\d+)/)?.[1] ?? -1);
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (index >= 0) errors[index]!.push(message);
    else throw new Error(`outside any manifest: ${message}`);
  }
  return errors;
}
