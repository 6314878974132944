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

/** The repository files `file` imports (relative to the root), type-only and dynamic imports included. */
function repoImports(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .filter((ref) => ref.fileName.startsWith('.'))
    .map((ref) => {
      const resolved = ts.resolveModuleName(ref.fileName, file, options, ts.sys).resolvedModule;
      if (resolved === undefined) throw new Error(`${relative(ROOT, file)}: cannot resolve ${ref.fileName}`);
      return relative(ROOT, resolved.resolvedFileName);
    });
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
      /^functions\/(chat-completions|embeddings|account|settle)\/|\/(edge|observability|billing|routing|store\/dynamo|app)\b|config\/upstream-credentials/.test(
        f,
      ),
    );
    expect(forbidden).toEqual([]);
  });

  it('takes from functions/ only modules that import no package but zod', () => {
    const withPackages = functionFiles.flatMap((f) =>
      [...(graph.packages.get(f) ?? [])].filter((p) => p !== 'zod' && !p.startsWith('zod/')).map((p) => `${f} imports ${p}`),
    );
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

/**
 * The layers of functions/shared (ARCHITECTURE.md "Layers"), lowest first: each folder with the folders
 * it may import. A row names only folders of rows above it, so imports run one way and no folder reaches
 * back up; a folder's own files (and subfolders) import each other freely. `leaf` is the modules that
 * import nothing of ours (LEAF_MODULES): plain data and value types any layer may read.
 */
const LAYERS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['leaf', []],
  ['validation', []],
  ['errors', []],
  ['time', []],
  ['retry', []],
  ['aws', ['retry']],
  ['money', []],
  ['config', ['leaf', 'validation', 'errors', 'aws']],
  ['observability', ['config']],
  ['http', ['config']],
  ['store', ['config', 'errors', 'retry', 'aws']],
  ['catalogue', ['leaf', 'validation', 'errors', 'time', 'money']],
  ['openai', ['leaf', 'validation', 'errors', 'catalogue']],
  ['usage', ['leaf', 'openai', 'catalogue']],
  ['providers', ['leaf', 'validation', 'errors', 'catalogue', 'openai', 'usage']],
  ['sse', ['errors', 'providers']],
  ['messages', ['validation', 'errors', 'catalogue', 'openai', 'providers']],
  ['gemini-api', ['validation', 'errors', 'catalogue', 'openai', 'providers']],
  ['responses', ['validation', 'errors', 'retry', 'config', 'observability', 'store', 'openai', 'providers']],
  ['accounts', ['leaf', 'validation', 'errors', 'time', 'retry', 'config', 'observability', 'store', 'providers']],
  ['identity', ['errors', 'config', 'accounts']],
  ['routing', ['errors', 'time', 'retry', 'config', 'observability', 'catalogue', 'openai', 'usage', 'providers', 'sse', 'accounts']],
  [
    'billing',
    [
      'leaf',
      'validation',
      'errors',
      'time',
      'retry',
      'money',
      'config',
      'observability',
      'http',
      'store',
      'catalogue',
      'openai',
      'usage',
      'accounts',
      'routing',
    ],
  ],
  ['notify', ['money', 'config', 'observability', 'store']],
  ['payments', ['validation', 'errors', 'retry', 'money', 'config', 'observability', 'store', 'billing', 'notify']],
  [
    'account-api',
    [
      'leaf',
      'validation',
      'errors',
      'money',
      'config',
      'observability',
      'http',
      'catalogue',
      'openai',
      'providers',
      'accounts',
      'identity',
      'billing',
      'payments',
    ],
  ],
  [
    'app',
    [
      'leaf',
      'validation',
      'errors',
      'time',
      'money',
      'config',
      'observability',
      'http',
      'sse',
      'catalogue',
      'openai',
      'usage',
      'providers',
      'messages',
      'gemini-api',
      'responses',
      'accounts',
      'routing',
      'billing',
    ],
  ],
  ['edge', ['errors', 'config', 'observability', 'http', 'routing']],
];

/** Modules that import nothing from the repository, so every layer may read them (`leaf` above). */
const LEAF_MODULES = [
  // The only list of providers (lib/ reads it too): names, base URLs, timeouts, BYOK flags.
  'functions/shared/providers/manifest.ts',
  // The normalised token usage: what adapters produce, surfaces encode and billing prices.
  'functions/shared/usage/token-usage.ts',
];

/** The layer of a file under functions/shared: `leaf`, or its first folder. */
function layerOf(file: string): string | undefined {
  if (LEAF_MODULES.includes(file)) return 'leaf';
  return /^functions\/shared\/([^/]+)\//.exec(file)?.[1];
}

/** The strongly connected components with more than one file (Tarjan), each sorted. */
function fileCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

describe('layers of functions/shared (ARCHITECTURE.md "Layers")', () => {
  const sources = ts.sys
    .readDirectory(resolve(ROOT, 'functions'), ['.ts'], undefined, undefined)
    .filter((f) => !f.endsWith('.d.ts'))
    .map((file) => ({ rel: relative(ROOT, file), imports: repoImports(file) }));
  const edges = new Map(sources.map((s) => [s.rel, s.imports]));
  const allowed = new Map(LAYERS.map(([folder, may]) => [folder, new Set(may)]));

  it('lists every folder of functions/shared once, each importing only folders listed above it', () => {
    const folders = [...new Set(sources.map((s) => layerOf(s.rel)).filter((l): l is string => l !== undefined && l !== 'leaf'))].sort();
    expect(
      LAYERS.map(([folder]) => folder)
        .filter((f) => f !== 'leaf')
        .sort(),
    ).toEqual(folders);
    const upward = LAYERS.flatMap(([folder, may], i) => may.filter((m) => LAYERS.findIndex(([f]) => f === m) >= i).map((m) => `${folder} -> ${m}`));
    expect(upward).toEqual([]);
  });

  it('every import between folders goes down the table', () => {
    const breaches = sources.flatMap(({ rel, imports }) => {
      const from = layerOf(rel);
      if (from === undefined) return []; // a Lambda edge (functions/<fn>/) may import any layer
      return imports
        .filter((to) => {
          const layer = layerOf(to);
          if (layer === undefined) return to.startsWith('functions/'); // functions/shared never imports an edge
          return layer !== from && !(allowed.get(from)?.has(layer) ?? false);
        })
        .map((to) => `${rel} -> ${to}`);
    });
    expect(breaches).toEqual([]);
  });

  it('leaf modules import nothing of the repository', () => {
    for (const leaf of LEAF_MODULES) expect([leaf, edges.get(leaf)]).toEqual([leaf, []]);
  });

  it('no import cycle between files', () => {
    expect(fileCycles(edges).map((c) => c.join(' <-> '))).toEqual([]);
  });
});
