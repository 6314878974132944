import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';

/**
 * Disposable (throwaway) email domains, from `disposable-email-domains-js`: the community blocklist of
 * github.com/disposable-email-domains/disposable-email-domains (CC0, about 8,900 domains, refreshed by
 * the package's releases). Sign-ups from these domains get no free-token grant (self-serve-account.ts):
 * a farm of throwaway addresses would otherwise take 200,000 tokens each.
 */
let blocklist: Set<string> | undefined;

/**
 * Whether `email`'s domain, or any parent of it (`a.b.mailinator.com` → `b.mailinator.com` →
 * `mailinator.com`), is on the disposable-domain list. Case and surrounding spaces are ignored; an
 * address without `@` is judged by the whole string. The list is read once per container (about 1 ms).
 */
export function isDisposableEmail(email: string): boolean {
  blocklist ??= disposableEmailBlocklistSet();
  const domain = email.trim().toLowerCase().split('@').pop() ?? '';
  const labels = domain.split('.');
  for (let i = 0; i < labels.length - 1; i++) if (blocklist.has(labels.slice(i).join('.'))) return true;
  return false;
}
