import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * What `cdk synth` loads: the static import graph from bin/app.ts (resolved by the TypeScript compiler
 * as tsc resolves it). lib/ may take plain constants from functions/ (config/stack-contract.ts, the
 * provider manifest, table schemas, account paths) but never the Lambda code: no logger, no SDK client,
 * no ledger, no edge.
 */
const ROOT = resolve(__dirname, '../..');
const options: ts.CompilerOptions = { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, allowImportingTsExtensions: true };

interface Graph {
  /** Repository files reached, relative to the root. */
  files: Set<string>;
  /** Packages imported, by the repository file that imports them. */
  packages: Map<string, Set<string>>;
}

function importGraph(entry: string): Graph {
  const files = new Set<string>();
  const packages = new Map<string, Set<string>>();
  const queue = [resolve(ROOT, entry)];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    const rel = relative(ROOT, file);
    if (files.has(rel)) continue;
    files.add(rel);
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const ref of info.importedFiles) {
      const name = ref.fileName;
      if (!name.startsWith('.')) {
        packages.set(rel, (packages.get(rel) ?? new Set()).add(name));
        continue;
      }
      const resolved = ts.resolveModuleName(name, file, options, ts.sys).resolvedModule;
      if (resolved === undefined) throw new Error(`${rel}: cannot resolve ${name}`);
      if (!resolved.isExternalLibraryImport) queue.push(resolved.resolvedFileName);
    }
  }
  return { files, packages };
}

describe('what cdk synth loads', () => {
  const graph = importGraph('bin/app.ts');
  const functionFiles = [...graph.files].filter((f) => f.startsWith('functions/'));

  it('reaches the stack and its constructs', () => {
    expect(graph.files).toContain('lib/modelmux-stack.ts');
    expect(functionFiles).toContain('functions/shared/config/stack-contract.ts');
  });

  it('loads none of the Lambda edge, logger, SDK clients, billing or credentials code', () => {
    const forbidden = functionFiles.filter((f) =>
      /^functions\/(chat-completions|embeddings|account|settle)\/|\/(edge|observability|billing|routing|store\/dynamo|app)\b|config\/upstream-credentials/.test(f),
    );
    expect(forbidden).toEqual([]);
  });

  it('takes from functions/ only modules that import no package but zod', () => {
    const withPackages = functionFiles.flatMap((f) => [...(graph.packages.get(f) ?? [])].filter((p) => p !== 'zod' && !p.startsWith('zod/')).map((p) => `${f} imports ${p}`));
    expect(withPackages).toEqual([]);
  });
});

describe('zod in the Lambda bundles', () => {
  /** Every TypeScript file under functions/, with the packages it imports. */
  const sources = ts.sys.readDirectory(resolve(ROOT, 'functions'), ['.ts'], undefined, undefined).map((file) => ({
    rel: relative(ROOT, file),
    imports: ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName),
  }));

  it('goes through functions/shared/validation/zod.ts alone (classic zod would come back into the bundles, bare zod/mini would lose the English messages)', () => {
    const direct = sources
      .filter((s) => s.rel !== 'functions/shared/validation/zod.ts')
      .flatMap((s) => s.imports.filter((name) => name === 'zod' || name.startsWith('zod/')).map((name) => `${s.rel} imports ${name}`));
    expect(sources.length).toBeGreaterThan(50);
    expect(direct).toEqual([]);
  });
});
