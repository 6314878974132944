import { buildSync, type Metafile } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds the dashboard (web/) into static files: `app-<hash>.js` (one ES module, minified),
 * `styles-<hash>.css`, `index.html` naming both, and `favicon.svg`. File names carry a content hash,
 * so every file but index.html can be cached for a year (see lib/constructs/site.ts).
 *
 * Synchronous (esbuild's buildSync) because CDK's local asset bundling (`tryBundle`) is synchronous.
 * Used by `npm run build:web` (→ web/dist), `npm start`, the tests and `cdk synth`.
 */

/** The web/ folder. */
export const WEB_DIR = dirname(fileURLToPath(import.meta.url));
/** Where `npm run build:web` writes (git-ignored). */
export const WEB_DIST_DIR = join(WEB_DIR, 'dist');

/** One file written by the build, size in bytes. */
export interface WebBuildFile {
  path: string;
  bytes: number;
}

/** What a build wrote. */
export interface WebBuildResult {
  outDir: string;
  files: WebBuildFile[];
  /** The app's JavaScript, minified, before compression, bytes. */
  jsBytes: number;
  cssBytes: number;
  /** Hashed names of the entry files (relative to outDir). */
  js: string;
  css: string;
}

/**
 * Cleans `outDir` and builds into it. `minify` defaults to true (what is deployed and measured).
 * @throws Error with esbuild's messages when the sources do not compile.
 */
export function buildWebSync(outDir: string = WEB_DIST_DIR, opts: { minify?: boolean } = {}): WebBuildResult {
  const out = resolve(outDir);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const result = buildSync({
    absWorkingDir: WEB_DIR,
    entryPoints: { app: 'src/main.tsx', styles: 'src/styles.css' },
    outdir: out,
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    splitting: false,
    minify: opts.minify ?? true,
    sourcemap: 'linked',
    target: ['es2022', 'chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'eof',
    metafile: true,
    logLevel: 'silent',
    write: true,
  });
  const js = entryOutput(result.metafile, out, 'src/main.tsx');
  const css = entryOutput(result.metafile, out, 'src/styles.css');
  const html = readFileSync(join(WEB_DIR, 'index.html'), 'utf8').replace('%JS%', js).replace('%CSS%', css);
  writeFileSync(join(out, 'index.html'), html);
  copyFileSync(join(WEB_DIR, 'favicon.svg'), join(out, 'favicon.svg'));
  const files = [js, css, `${js}.map`, `${css}.map`, 'index.html', 'favicon.svg'].map((path) => ({ path, bytes: statSync(join(out, path)).size }));
  return { outDir: out, files, jsBytes: sizeOf(files, js), cssBytes: sizeOf(files, css), js, css };
}

function entryOutput(metafile: Metafile | undefined, out: string, entry: string): string {
  for (const [path, output] of Object.entries(metafile?.outputs ?? {})) {
    if (output.entryPoint === entry && !path.endsWith('.map')) return relative(out, resolve(WEB_DIR, path));
  }
  throw new Error(`web build: no output for ${entry}`);
}

function sizeOf(files: readonly WebBuildFile[], path: string): number {
  return files.find((f) => f.path === path)?.bytes ?? 0;
}

// `tsx web/build.ts [outDir]`: build and print the sizes.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = buildWebSync(process.argv[2] ?? WEB_DIST_DIR);
  for (const f of built.files) process.stdout.write(`${f.path.padEnd(28)} ${(f.bytes / 1024).toFixed(1).padStart(7)} KB\n`);
  process.stdout.write(
    `dashboard built in ${relative(process.cwd(), built.outDir) || '.'}: ${(built.jsBytes / 1024).toFixed(1)} KB of JavaScript (minified)\n`,
  );
}
