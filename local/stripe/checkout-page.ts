/**
 * The stand-in's hosted checkout page: Stripe Checkout's role, with no card form — one button pays
 * with a test card (and one declines), then the browser goes to the session's `success_url` (or back
 * to its `cancel_url`), as Stripe's page does.
 */
import type { CheckoutSession } from './objects';

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page of an open session. */
export function checkoutPage(session: CheckoutSession, saves: boolean): string {
  const amount = `$${(session.amount_total / 100).toFixed(2)}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pay ${amount} · Stripe stand-in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1a1f36}
button{font:inherit;padding:.7rem 1.2rem;border-radius:6px;border:0;background:#635bff;color:#fff;cursor:pointer;width:100%;margin:.4rem 0}
button.secondary{background:#e3e8ee;color:#1a1f36}.muted{color:#697386;font-size:.9rem}</style></head>
<body><main>
<h1>Pay ${amount}</h1>
<p>modelmux credit${session.customer_email ? ` for ${escape(String(session.customer_email))}` : ''}.</p>
<p class="muted">This is the local Stripe stand-in (npm start): no card is charged.${saves ? ' The test card is saved for auto top-up.' : ''}</p>
<form method="post" action="/pay/${escape(session.id)}"><input type="hidden" name="card" value="4242424242424242">
<button type="submit">Pay ${amount} with a test card</button></form>
<form method="post" action="/pay/${escape(session.id)}/cancel"><button class="secondary" type="submit">Cancel and go back</button></form>
</main></body></html>`;
}

/** A short page for a session that is no longer open. */
export function closedPage(session: CheckoutSession | undefined): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Checkout</title></head><body><main><h1>${session ? 'This checkout is ' + escape(session.status) : 'No such checkout'}</h1></main></body></html>`;
}
