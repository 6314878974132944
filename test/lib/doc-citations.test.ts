import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The docs the code cites live in the repository (docs/): every `providers.md §N`, `DATA-MODEL §N`,
 * `peers.md A|B<n>|C` and `DESIGN.md "<section>"` citation in the product, its tools and its tests names
 * a file of docs/ and a section (or row) that file has, and every `README, "<section>"` a heading or a
 * bold paragraph lead of README.md, so a reader can follow it. No file cites one of modelmux's own issues by
 * number (`issue 21`): a newcomer has no tracker to read, so the fact is written out or its doc is cited;
 * another project's issue names its project (`runtime-interface-client issue #97`). Comments wrap, so the
 * text is read with the comment leaders (`*`, `//`) of continued lines folded into spaces.
 */
const ROOT = resolve(__dirname, '../..');
const DOCS = resolve(ROOT, 'docs');
const FOLDERS = ['functions', 'local', 'lib', 'web/src', 'bin', 'bench', 'test'];
const SELF = relative(ROOT, __filename);

/**
 * Files that cite a path outside the repository, waiting for their owner to cite docs/ instead. A new
 * file is never added here: bring the fact into docs/ with its source.
 */
const KNOWN_OUTSIDE_CITATIONS = new Set<string>();

/** `issue 21`, `Issue 24's`, `issues 13`: modelmux's own tracker, unless a project name (with `-` or `/`) precedes it. */
const OWN_ISSUE = /(?<![\w.-]*[-/][\w.-]* )\b[Ii]ssues? #?\d+/g;

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'fixtures') continue;
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The text with line breaks inside comments (and the comment leader of the next line) folded to one space. */
function folded(text: string): string {
  return text.replace(/\s*\n\s*(?:\*(?!\/)|\/\/)?\s*/g, ' ');
}

/** One citation: where, what was written, and the missing targets it names (empty when it resolves). */
interface Citation {
  file: string;
  text: string;
  missing: string[];
}

/** Section numbers of a doc: headings `## 1.7 …`, `### 2.5 …`, `## 0. …`, `## §3 …`. */
function numberedSections(doc: string): Set<string> {
  const out = new Set<string>();
  for (const m of doc.matchAll(/^#{1,6}\s+§?(\d+(?:\.\d+)*)\.?\s/gm)) out.add(m[1] as string);
  return out;
}

/** A chain of section numbers as written after a file name: `§1.5, §2.7`, `§2.8/§3.8`, `§1.1–1.2`, `§2–§6`, `§2 and §5`. */
const SECTION_CHAIN = String.raw`§\s?\d+(?:\.\d+)*(?:(?:\s*[-–]\s*§?\s?|(?:\s*[,/]\s*|\s+(?:and|or)\s+)§\s?)\d+(?:\.\d+)*)*`;

/** The section numbers in a chain (a range names both its ends). */
function chainSections(chain: string): string[] {
  return [...chain.matchAll(/\d+(?:\.\d+)*/g)].map((m) => m[0]);
}

function readDoc(name: string): string | undefined {
  const path = join(DOCS, name);
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** `<file>` citations with numbered sections: providers.md, DATA-MODEL(.md). */
function numberedCitations(file: string, text: string, pattern: RegExp, docName: string): Citation[] {
  const doc = readDoc(docName);
  const sections = doc === undefined ? new Set<string>() : numberedSections(doc);
  const out: Citation[] = [];
  for (const m of text.matchAll(pattern)) {
    const chain = m[1];
    const missing = doc === undefined ? [`docs/${docName}`] : [];
    if (chain !== undefined) for (const n of chainSections(chain)) if (doc !== undefined && !sections.has(n)) missing.push(`docs/${docName} §${n}`);
    out.push({ file, text: m[0], missing });
  }
  return out;
}

/** The part of peers.md under `## <letter>.` up to the next `## `. */
function peersPart(doc: string, letter: string): string | undefined {
  const start = doc.search(new RegExp(`^## ${letter}\\.\\s`, 'm'));
  if (start < 0) return undefined;
  const rest = doc.slice(start + 3);
  const end = rest.search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** `peers.md`, `peers.md A`, `peers.md B5`, `peers.md A, "Model list"`: the part, its numbered row, the quoted words. */
function peersCitations(file: string, text: string): Citation[] {
  const doc = readDoc('peers.md');
  const out: Citation[] = [];
  for (const m of text.matchAll(/peers\.md(?:\s+([A-Z])(\d+)?\b(?:,\s*"([^"]+)")?)?/g)) {
    const [whole, letter, row, quoted] = m;
    const missing: string[] = [];
    if (doc === undefined) missing.push('docs/peers.md');
    else if (letter !== undefined) {
      const part = peersPart(doc, letter);
      if (part === undefined) missing.push(`docs/peers.md ${letter}`);
      else if (row !== undefined && !new RegExp(`^\\| ${row} \\|`, 'm').test(part)) missing.push(`docs/peers.md ${letter}${row}`);
      else if (quoted !== undefined && !part.toLowerCase().includes(quoted.toLowerCase())) missing.push(`docs/peers.md ${letter} "${quoted}"`);
    }
    out.push({ file, text: whole, missing });
  }
  return out;
}

/** `DESIGN.md "Style"` names a `## Style` heading; `DESIGN.md: <rule>` needs the file. */
function designCitations(file: string, text: string): Citation[] {
  const doc = readDoc('DESIGN.md');
  const headings = new Set([...(doc ?? '').matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => (m[1] as string).toLowerCase()));
  const out: Citation[] = [];
  for (const m of text.matchAll(/DESIGN\.md(?:\s+"([^"]+)")?/g)) {
    const missing: string[] = [];
    if (doc === undefined) missing.push('docs/DESIGN.md');
    else if (m[1] !== undefined && !headings.has(m[1].toLowerCase())) missing.push(`docs/DESIGN.md "${m[1]}"`);
    out.push({ file, text: m[0], missing });
  }
  return out;
}

/** `README, "Durable settle"`, `README: "Runbook: read the dashboard"`: each `:`-part starts a heading or a bold lead. */
function readmeCitations(file: string, text: string): Citation[] {
  const leads = [...readFileSync(resolve(ROOT, 'README.md'), 'utf8').matchAll(/^(?:#{1,6}\s+|\*\*)(.+)$/gm)].map((m) => (m[1] as string).toLowerCase());
  const out: Citation[] = [];
  for (const m of text.matchAll(/README(?:\.md)?[,:]\s*"([^"]+)"/g)) {
    const parts = (m[1] as string).split(':').map((p) => p.trim().toLowerCase());
    const missing = parts.filter((p) => !leads.some((lead) => lead.startsWith(p))).map((p) => `README.md "${p}"`);
    out.push({ file, text: m[0], missing });
  }
  return out;
}

const PROVIDERS = new RegExp(String.raw`providers\.md\)?[\s(]*(${SECTION_CHAIN})?`, 'g');
const DATA_MODEL = new RegExp(String.raw`DATA-MODEL(?:\.md)?\s*(${SECTION_CHAIN})?`, 'g');

const citations: Citation[] = [];
const outside: string[] = [];
const ownIssues: string[] = [];
const missingDocs: string[] = [];
for (const path of FOLDERS.flatMap((folder) => sourceFiles(resolve(ROOT, folder)))) {
  const file = relative(ROOT, path);
  if (file === SELF) continue;
  const text = folded(readFileSync(path, 'utf8'));
  citations.push(
    ...numberedCitations(file, text, PROVIDERS, 'providers.md'),
    ...numberedCitations(file, text, DATA_MODEL, 'DATA-MODEL.md'),
    ...peersCitations(file, text),
    ...designCitations(file, text),
    ...readmeCitations(file, text),
  );
  for (const m of text.matchAll(/\bdocs\/[\w.-]+\.(?:md|png)\b/g)) if (!existsSync(resolve(ROOT, m[0]))) missingDocs.push(`${file}: ${m[0]}`);
  for (const m of text.matchAll(OWN_ISSUE)) ownIssues.push(`${file}: "${m[0]}"`);
  if (/\/work\/shared\/|\.\.\/shared\/(?:reference|spec)\/|shared\/DESIGN\.md/.test(text) && !KNOWN_OUTSIDE_CITATIONS.has(file)) outside.push(file);
}

describe('doc citations resolve in docs/ and the README', () => {
  it('finds the citations (the scan reads the code)', () => {
    const count = (needle: string) => citations.filter((c) => c.text.startsWith(needle)).length;
    expect(count('providers.md')).toBeGreaterThan(100);
    expect(count('DATA-MODEL')).toBeGreaterThan(20);
    expect(count('peers.md')).toBeGreaterThan(5);
    expect(count('DESIGN.md')).toBeGreaterThan(3);
    expect(count('README')).toBeGreaterThan(3);
  });

  it('every cited doc file and section exists', () => {
    const broken = citations.filter((c) => c.missing.length > 0).map((c) => `${c.file}: "${c.text}" → missing ${c.missing.join(', ')}`);
    expect(broken).toEqual([]);
  });

  it('the section parser reads chains, ranges and headings as written', () => {
    const chain = new RegExp(SECTION_CHAIN);
    expect(chainSections(chain.exec('see §2.8/§3.8/§4.2 lifecycles')?.[0] ?? '')).toEqual(['2.8', '3.8', '4.2']);
    expect(chainSections(chain.exec('(§1.1–1.2) and more')?.[0] ?? '')).toEqual(['1.1', '1.2']);
    expect(chainSections(chain.exec('§2 and §5, 300 lines')?.[0] ?? '')).toEqual(['2', '5']);
    expect(chainSections(chain.exec('§0. Next')?.[0] ?? '')).toEqual(['0']);
    expect([...numberedSections('## 0. Quick\n### 1.10 Images\n## §7 Routes\n# Title\n')]).toEqual(['0', '1.10', '7']);
  });

  it('every docs/<file> a file names exists', () => {
    expect(missingDocs).toEqual([]);
  });

  it('no file cites a path outside the repository', () => {
    expect(outside).toEqual([]);
  });

  it("no file cites modelmux's own issues by number; another project's issue names its project", () => {
    expect(ownIssues).toEqual([]);
    expect('see issue 21 and Issue 24 item 4'.match(OWN_ISSUE)).toEqual(['issue 21', 'Issue 24']);
    expect('runtime-interface-client issue #97, aws/aws-cdk issue 123'.match(OWN_ISSUE)).toBeNull();
  });
});
