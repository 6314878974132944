/**
 * One free grant per person: the form of a sign-in email that decides whether it already had its
 * 200,000 free tokens (accounts/self-serve-account.ts keys the grant marker on it). Addresses that
 * deliver to the same mailbox map to one form, so `me+1@gmail.com`, `m.e+2@googlemail.com` and
 * `ME@gmail.com` share one grant (docs/email-normalisation.md has the rules and their sources):
 *
 * 1. trim and lower-case the whole address (domains are case-insensitive, RFC 5321 §2.4; every large
 *    provider treats local parts so too);
 * 2. drop a `+tag` from the local part (subaddressing, RFC 5233; Gmail, Outlook, iCloud, Fastmail and
 *    Proton all deliver `name+tag@` to `name@`);
 * 3. for Gmail (`gmail.com`, and `googlemail.com`, the same mailboxes) drop the dots in the local
 *    part (Gmail ignores them: support.google.com/mail/answer/7436150).
 *
 * The account keeps the address as the user typed it (lower case); only the grant marker uses this form.
 */

/** Domains whose mailboxes are Gmail's (dots in the local part are ignored there). */
const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/**
 * The grant identity of `email`: see the file comment. An address without `@` (never a verified
 * Cognito email) is only trimmed and lower-cased.
 */
export function freeGrantIdentity(email: string): string {
  const address = email.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  if (at <= 0) return address;
  let local = address.slice(0, at);
  let domain = address.slice(at + 1);
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  if (GMAIL_DOMAINS.has(domain)) {
    local = local.replaceAll('.', '');
    domain = 'gmail.com';
  }
  return `${local}@${domain}`;
}
