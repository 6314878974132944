/**
 * The dashboard's section of BENCHMARKS.md, kept between two markers: `npm run bench:dashboard`
 * writes it, and `npm run bench` (which rewrites the rest of the file) carries it over unchanged.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const START = '<!-- dashboard:start (npm run bench:dashboard) -->';
const END = '<!-- dashboard:end -->';

/** The section in `markdown`, markers included, or '' when there is none. */
export function dashboardSection(markdown: string): string {
  const a = markdown.indexOf(START);
  const b = markdown.indexOf(END, a);
  return a < 0 || b < 0 ? '' : markdown.slice(a, b + END.length);
}

/** The current section of the file at `path` ('' when the file or the section is missing). */
export function readDashboardSection(path: string): string {
  return existsSync(path) ? dashboardSection(readFileSync(path, 'utf8')) : '';
}

/** Puts `body` in the file at `path` as the dashboard section, replacing the old one or appending. */
export function writeDashboardSection(path: string, body: string): void {
  const md = existsSync(path) ? readFileSync(path, 'utf8') : '# modelmux benchmarks\n';
  const section = `${START}\n${body.trim()}\n${END}`;
  const old = dashboardSection(md);
  writeFileSync(path, old === '' ? `${md.trimEnd()}\n\n${section}\n` : md.replace(old, section));
}
