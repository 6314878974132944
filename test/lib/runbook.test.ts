import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CONTEXT_KEYS } from '../../lib/stack-context';
import { synthTemplate } from './support/synth';

/**
 * The README's deploy section is the operator's runbook: "Before you deploy" and the numbered "First
 * deploy" of "## Deploying". Every stack output they name (a backticked `PascalCase` name, or a
 * `<PascalCase>` placeholder for its value) must be an output of the synthesised template, and every
 * `-c <key>=` a context key the stack reads (lib/stack-context.ts), so a line followed in a fresh
 * account never names a value that does not exist. The first deploy is an ordered list in the order
 * that works: SES verified before a deploy with `emailFrom`, the deploy with `alarmEmail`, then the
 * secrets and the Stripe webhook.
 */

vi.setConfig({ testTimeout: 120_000 });

const README = readFileSync(resolve(__dirname, '../../README.md'), 'utf8');

/** The lines of the README outside fenced code blocks marked, so `# comments` in code are not headings. */
function headings(): Array<{ line: number; level: number; title: string }> {
  const out: Array<{ line: number; level: number; title: string }> = [];
  let fenced = false;
  README.split('\n').forEach((text, line) => {
    if (/^\s*```/.test(text)) fenced = !fenced;
    const m = fenced ? null : /^(#{1,6})\s+(.+)$/.exec(text);
    if (m) out.push({ line, level: (m[1] as string).length, title: (m[2] as string).trim() });
  });
  return out;
}

/** The text under the heading `title` (its own subsections included), up to the next heading of its level or above. */
function section(title: string): string {
  const all = headings();
  const at = all.findIndex((h) => h.title === title);
  if (at < 0) throw new Error(`README has no heading "${title}"`);
  const head = all[at]!;
  const next = all.slice(at + 1).find((h) => h.level <= head.level);
  return README.split('\n')
    .slice(head.line + 1, next?.line)
    .join('\n');
}

/** Output names: backticked `PascalCase` words and `<PascalCase>` placeholders. */
function outputNames(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/`([A-Z][a-z][A-Za-z0-9]*)`|<([A-Z][a-z][A-Za-z0-9]*)>/g)) found.add((m[1] ?? m[2]) as string);
  return [...found].sort();
}

/** Every `-c <key>=` (or `-c <key>` alone) in the text. */
function contextKeys(text: string): string[] {
  return [...new Set([...text.matchAll(/(?:^|[\s`(])-c\s+([A-Za-z][A-Za-z0-9]*)/gm)].map((m) => m[1] as string))].sort();
}

const deploying = (): string => section('Before you deploy') + '\n' + section('First deploy');

/** Outputs of the stack with CloudFront (the default) and without it: what an operator may meet. */
let outputs: Set<string>;

beforeAll(() => {
  const keysOf = (context: Record<string, unknown>) => Object.keys(synthTemplate(context).toJSON().Outputs as Record<string, unknown>);
  // The default options with an alarm address (the context the monitoring tests synthesise too), and without CloudFront.
  outputs = new Set([...keysOf({ alarmEmail: 'ops@example.com' }), ...keysOf({ alarmEmail: 'ops@example.com', cloudfront: 'false' })]);
}, 120_000);

describe("the README's deploy runbook", () => {
  it('names only outputs the template has', () => {
    const named = outputNames(deploying());
    for (const name of ['BaseUrl', 'AccountUrl', 'DashboardUrl', 'AlarmTopicArn', 'PutUpstreamKeysCommand', 'StripeSecretPutCommand', 'KeysTableName'])
      expect(named).toContain(name);
    expect(named.filter((name) => !outputs.has(name))).toEqual([]);
  });

  it('names only context keys the stack reads (there and anywhere in the README)', () => {
    const named = contextKeys(deploying());
    expect(named).toEqual(expect.arrayContaining(['alarmEmail', 'accountConcurrencyLimit', 'emailFrom', 'publicBaseUrl', 'cloudfront']));
    expect(named.filter((key) => !CONTEXT_KEYS.includes(key))).toEqual([]);
    expect(contextKeys(README).filter((key) => !CONTEXT_KEYS.includes(key))).toEqual([]);
  });

  it('is a numbered first-deploy list: SES before emailFrom, the deploy with alarmEmail, then the keys and the Stripe webhook', () => {
    const steps = section('First deploy')
      .split(/\n(?=\d+\. )/)
      .filter((s) => /^\d+\. /.test(s));
    expect(steps.map((s) => Number(/^(\d+)\./.exec(s)![1]))).toEqual(steps.map((_, i) => i + 1));
    const step = (pattern: RegExp): number => {
      const i = steps.findIndex((s) => pattern.test(s));
      expect(i, String(pattern)).toBeGreaterThanOrEqual(0);
      return i;
    };
    const ses = step(/create-email-identity/);
    const deploy = step(/npx cdk deploy Modelmux -c alarmEmail=/);
    expect(ses).toBeLessThan(deploy);
    expect(steps[deploy]).toMatch(/emailFrom=.*after step \d/);
    expect(step(/`PutUpstreamKeysCommand` output/)).toBeGreaterThan(deploy);
    const stripe = step(/`StripeSecretPutCommand` output/);
    expect(stripe).toBeGreaterThan(deploy);
    // The webhook endpoint: BaseUrl already ends in /v1; without CloudFront it is the account function's URL.
    expect(steps[stripe]).toContain('<BaseUrl>/billing/stripe/webhook');
    expect(steps[stripe]).toContain('<AccountUrl>v1/billing/stripe/webhook');
    expect(step(/npm run admin -- health/)).toBe(steps.length - 1);
  });

  it('names the restore role output in the restore steps', () => {
    const restore = README.slice(README.indexOf('**Backups and restore.**'), README.indexOf('**Cognito cannot be backed up.**'));
    expect(restore).toContain('--iam-role-arn <BackupRestoreRoleArn>');
    expect(outputs.has('BackupRestoreRoleArn')).toBe(true);
  });
});
