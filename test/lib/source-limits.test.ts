import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The house rule (DESIGN.md), relaxed to what reads best: no source file over 400 lines and no function over 100,
 * data files aside. Measured with the TypeScript compiler over the product and its tools (functions/,
 * lib/, bin/, local/); test/ and web/ are not covered. A function's length is the span of its node,
 * first line to last, nested functions included (so a long inner callback counts against its parent too).
 */
const ROOT = resolve(__dirname, '../..');
const FOLDERS = ['functions', 'lib', 'bin', 'local'];
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 100;

/**
 * Data files: tables of facts, not logic. Each is exempt from the file limit only, with its reason.
 */
const DATA_FILES: Record<string, string> = {
  // The model catalogue: one entry per model with its prices and limits (data, grows with each model).
  'functions/shared/catalogue/models.ts': 'model catalogue table',
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Every function-like node longer than the limit, as `file:line name (n lines)`. */
function longFunctions(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) found.push(`${relative(ROOT, file)}:${start + 1} ${functionName(node)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function functionName(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '<anonymous>';
}

const files = FOLDERS.flatMap((folder) => sourceFiles(resolve(ROOT, folder)));

describe('source size limits (DESIGN.md: files under 400 lines, functions under 100)', () => {
  it('no source file over 400 lines, data files aside', () => {
    const long = files
      .map((file) => ({ file: relative(ROOT, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter(({ file, lines }) => lines > MAX_FILE_LINES && !(file in DATA_FILES))
      .map(({ file, lines }) => `${file} (${lines} lines)`);
    expect(long).toEqual([]);
  });

  it('no function over 100 lines', () => {
    const long = files.flatMap((file) => longFunctions(file, readFileSync(file, 'utf8')));
    expect(long).toEqual([]);
  });

  it('every exempt data file still exists', () => {
    for (const file of Object.keys(DATA_FILES)) expect(files.map((f) => relative(ROOT, f))).toContain(file);
  });
});
