/**
 * A local Stripe stand-in on loopback for `npm start` and the tests: the API endpoints modelmux calls,
 * answered with objects shaped as Stripe's OpenAPI description says (objects.ts), a hosted checkout page
 * (checkout-page.ts) and signed webhook deliveries (webhooks.ts). The official `stripe` SDK talks to it
 * through its `host`/`port`/`protocol` options (functions/shared/payments/stripe-client.ts).
 *
 * Served: `POST /v1/checkout/sessions`, `GET /v1/checkout/sessions/:id`, `POST /v1/customers`,
 * `POST /v1/payment_intents` (off-session, confirmed at once; `Idempotency-Key` replays the first
 * answer), `GET /v1/payment_intents/:id` (`expand[]=latest_charge`), `POST /v1/refunds`. A payment
 * method `pm_card_chargeDeclined` declines (Stripe's test payment method of that name).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkoutPage, closedPage } from './checkout-page';
import { decodeStripeForm, list, metadataOf, obj, str, type FormValue } from './form';
import { newCharge, newCheckoutSession, newCustomer, newEvent, newPaymentIntent, newRefund, stripeError, stripeId, type CheckoutSession } from './objects';
import { createWebhookSender, type WebhookSender } from './webhooks';

/** A running stand-in. */
export interface StripeStandIn {
  /** `http://127.0.0.1:<port>`: STRIPE_API_BASE, and the checkout pages. */
  url: string;
  /** The secret key it accepts (`sk_test_…`). */
  secretKey: string;
  webhooks: WebhookSender;
  /** Objects by id (tests read them). */
  objects: Map<string, Record<string, unknown>>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
interface Answer {
  status: number;
  body: Json | string;
  location?: string;
}

/** The stand-in's objects and the API operations on them. */
class StandIn {
  readonly objects = new Map<string, Json>();
  private readonly sessionExtras = new Map<string, { piMetadata: Record<string, string>; setupFutureUsage: string | null }>();
  private readonly idempotent = new Map<string, Answer>();
  base = '';

  constructor(private readonly webhooks: WebhookSender) {}

  private emit(type: string, object: Json): void {
    this.webhooks.send(newEvent(type, structuredClone(object), '2025-02-24.acacia'));
  }

  /** Charges `amount` to a new PaymentIntent (succeeded, or declined for the decline test method). */
  private charge(input: {
    amount: number;
    currency: string;
    customer: string | null;
    paymentMethod: string;
    metadata: Record<string, string>;
    setupFutureUsage: string | null;
  }): Json {
    const intent = newPaymentIntent(input);
    const failed = input.paymentMethod === 'pm_card_chargeDeclined';
    const ch = newCharge({
      amount: input.amount,
      currency: input.currency,
      paymentIntent: String(intent.id),
      customer: input.customer,
      paymentMethod: input.paymentMethod,
      receiptBase: this.base,
      failed,
    });
    this.objects.set(String(ch.id), ch);
    Object.assign(
      intent,
      failed
        ? {
            status: 'requires_payment_method',
            latest_charge: ch.id,
            last_payment_error: {
              type: 'card_error',
              code: 'card_declined',
              decline_code: 'generic_decline',
              message: 'Your card was declined.',
              charge: ch.id,
            },
          }
        : { status: 'succeeded', amount_received: input.amount, latest_charge: ch.id },
    );
    this.objects.set(String(intent.id), intent);
    return intent;
  }

  /** The hosted page's "Pay": a customer when asked, a succeeded PaymentIntent, the session complete, its events. */
  private pay(session: CheckoutSession): void {
    const extras = this.sessionExtras.get(session.id);
    let customer = session.customer;
    if (customer === null && (session.customer_creation === 'always' || extras?.setupFutureUsage)) {
      const c = newCustomer({ email: session.customer_email, metadata: {} });
      this.objects.set(String(c.id), c);
      customer = String(c.id);
    }
    const intent = this.charge({
      amount: session.amount_total,
      currency: session.currency,
      customer,
      paymentMethod: stripeId('pm'),
      metadata: extras?.piMetadata ?? {},
      setupFutureUsage: extras?.setupFutureUsage ?? null,
    });
    Object.assign(session, { status: 'complete', payment_status: 'paid', payment_intent: intent.id, customer, url: null });
    this.emit('payment_intent.succeeded', intent);
    this.emit('charge.succeeded', this.objects.get(String(intent.latest_charge)) as Json);
    this.emit('checkout.session.completed', session as unknown as Json);
  }

  /** One API call. */
  api(method: string, path: string, form: Record<string, FormValue>, idemKey: string | undefined): Answer {
    if (method === 'POST' && path === '/v1/checkout/sessions') return this.createSession(form);
    if (method === 'POST' && path === '/v1/customers') {
      const c = newCustomer({ email: str(form.email) ?? null, metadata: metadataOf(form.metadata) });
      this.objects.set(String(c.id), c);
      return { status: 200, body: c };
    }
    if (method === 'POST' && path === '/v1/payment_intents') {
      const cached = idemKey === undefined ? undefined : this.idempotent.get(idemKey);
      if (cached) return cached;
      const answer = this.createPaymentIntent(form);
      if (idemKey !== undefined && answer.status !== 400) this.idempotent.set(idemKey, answer);
      return answer;
    }
    if (method === 'POST' && path === '/v1/refunds') return this.createRefund(form);
    const get = /^\/v1\/(checkout\/sessions|payment_intents)\/([^/]+)$/.exec(path);
    if (method === 'GET' && get)
      return this.retrieve(get[1] === 'payment_intents' ? 'payment_intent' : 'checkout.session', decodeURIComponent(get[2] ?? ''), form);
    return {
      status: 404,
      body: stripeError('invalid_request_error', `Unrecognized request URL (${method}: ${path}). The local Stripe stand-in serves only what modelmux calls.`),
    };
  }

  private createSession(form: Record<string, FormValue>): Answer {
    const item = obj(list(form.line_items)[0]);
    const price = obj(item.price_data);
    const amount = Number(str(price.unit_amount)) * Number(str(item.quantity) ?? '1');
    if (str(form.mode) !== 'payment' || !Number.isSafeInteger(amount) || amount <= 0)
      return {
        status: 400,
        body: stripeError('invalid_request_error', 'The stand-in serves mode=payment sessions with one line item with price_data.unit_amount.', {
          param: 'line_items',
        }),
      };
    const creation = str(form.customer_creation);
    const session = newCheckoutSession({
      amount,
      currency: str(price.currency) ?? 'usd',
      clientReferenceId: str(form.client_reference_id) ?? null,
      customer: str(form.customer) ?? null,
      customerEmail: str(form.customer_email) ?? null,
      metadata: metadataOf(form.metadata),
      successUrl: str(form.success_url) ?? '',
      cancelUrl: str(form.cancel_url) ?? '',
      pageBase: this.base,
      customerCreation: creation === 'always' || creation === 'if_required' ? creation : null,
    });
    const pid = obj(form.payment_intent_data);
    this.sessionExtras.set(session.id, { piMetadata: metadataOf(pid.metadata), setupFutureUsage: str(pid.setup_future_usage) ?? null });
    this.objects.set(session.id, session as unknown as Json);
    return { status: 200, body: session as unknown as Json };
  }

  /** An off-session, confirmed PaymentIntent: succeeded (200) or declined (402 `card_error`), with its event. */
  private createPaymentIntent(form: Record<string, FormValue>): Answer {
    const amount = Number(str(form.amount));
    const pm = str(form.payment_method);
    if (!Number.isSafeInteger(amount) || amount <= 0 || pm === undefined || str(form.confirm) !== 'true')
      return {
        status: 400,
        body: stripeError('invalid_request_error', 'The stand-in serves confirmed PaymentIntents with an amount and a payment_method.', { param: 'amount' }),
      };
    const intent = this.charge({
      amount,
      currency: str(form.currency) ?? 'usd',
      customer: str(form.customer) ?? null,
      paymentMethod: pm,
      metadata: metadataOf(form.metadata),
      setupFutureUsage: null,
    });
    const declined = intent.status !== 'succeeded';
    this.emit(declined ? 'payment_intent.payment_failed' : 'payment_intent.succeeded', intent);
    return declined
      ? {
          status: 402,
          body: stripeError('card_error', 'Your card was declined.', { code: 'card_declined', decline_code: 'generic_decline', payment_intent: intent }),
        }
      : { status: 200, body: intent };
  }

  /** A refund of a charge (or a PaymentIntent's charge): the charge's `amount_refunded` grows, `charge.refunded` is sent. */
  private createRefund(form: Record<string, FormValue>): Answer {
    const intent = this.objects.get(str(form.payment_intent) ?? '');
    const ch = this.objects.get(str(form.charge) ?? String(intent?.latest_charge ?? ''));
    if (ch?.object !== 'charge' || ch.status !== 'succeeded')
      return { status: 404, body: stripeError('invalid_request_error', 'No such charge or payment_intent.', { param: 'charge', code: 'resource_missing' }) };
    const left = Number(ch.amount) - Number(ch.amount_refunded);
    const amount = str(form.amount) === undefined ? left : Number(str(form.amount));
    if (!Number.isSafeInteger(amount) || amount <= 0 || amount > left)
      return { status: 400, body: stripeError('invalid_request_error', `Refund amount must be 1 to ${left} cents.`, { param: 'amount' }) };
    const refund = newRefund({ amount, currency: String(ch.currency), charge: String(ch.id), paymentIntent: (ch.payment_intent as string | null) ?? null });
    this.objects.set(String(refund.id), refund);
    Object.assign(ch, { amount_refunded: Number(ch.amount_refunded) + amount, refunded: Number(ch.amount_refunded) + amount === Number(ch.amount) });
    (ch.refunds as { data: Json[] }).data.unshift(refund);
    this.emit('charge.refunded', ch);
    return { status: 200, body: refund };
  }

  private retrieve(object: string, id: string, form: Record<string, FormValue>): Answer {
    const found = this.objects.get(id);
    if (found?.object !== object)
      return { status: 404, body: stripeError('invalid_request_error', `No such ${object}: '${id}'`, { code: 'resource_missing', param: 'id' }) };
    const out = { ...found };
    if (list(form.expand).map(String).includes('latest_charge') && typeof out.latest_charge === 'string')
      out.latest_charge = this.objects.get(out.latest_charge) ?? out.latest_charge;
    return { status: 200, body: out };
  }

  /** The hosted checkout page: GET shows it, POST pays (or cancels) and redirects as Stripe's does. */
  page(method: string, path: string): Answer {
    const m = /^\/pay\/([^/]+)(\/cancel)?$/.exec(path);
    const session = this.objects.get(decodeURIComponent(m?.[1] ?? '')) as unknown as CheckoutSession | undefined;
    if (m === null || session?.object !== 'checkout.session') return { status: 404, body: closedPage(undefined) };
    if (session.status !== 'open') return { status: 410, body: closedPage(session) };
    if (method === 'GET') return { status: 200, body: checkoutPage(session, this.sessionExtras.get(session.id)?.setupFutureUsage === 'off_session') };
    if (m[2] === '/cancel') return { status: 303, body: '', location: session.cancel_url };
    this.pay(session);
    return { status: 303, body: '', location: session.success_url };
  }
}

/** Starts the stand-in; events go to `webhookUrl` (settable later on `webhooks.url`), signed with `webhookSecret`. */
export async function startStripeStandIn(opts: {
  webhookSecret: string;
  secretKey?: string;
  webhookUrl?: string;
  port?: number;
  retryDelaysMs?: number[];
}): Promise<StripeStandIn> {
  const secretKey = opts.secretKey ?? `sk_test_local_${stripeId('k').slice(2)}`;
  const webhooks = createWebhookSender(opts.webhookSecret, opts.retryDelaysMs);
  webhooks.url = opts.webhookUrl;
  const state = new StandIn(webhooks);
  const server = createServer((req, res) => void handle(req, res));
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const method = req.method ?? 'GET';
    let answer: Answer;
    if (url.pathname.startsWith('/v1/')) {
      answer =
        req.headers.authorization !== `Bearer ${secretKey}`
          ? { status: 401, body: stripeError('invalid_request_error', 'Invalid API Key provided.') }
          : state.api(
              method,
              url.pathname,
              decodeStripeForm(method === 'GET' ? url.search.slice(1) : Buffer.concat(chunks).toString('utf8')),
              header(req, 'idempotency-key'),
            );
    } else {
      answer = state.page(method, url.pathname);
    }
    res.writeHead(answer.status, {
      'content-type': typeof answer.body === 'string' ? 'text/html; charset=utf-8' : 'application/json',
      'request-id': stripeId('req'),
      ...(answer.location === undefined ? {} : { location: answer.location }),
    });
    res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
  };
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: state.base,
    secretKey,
    webhooks,
    objects: state.objects,
    close: async () => {
      webhooks.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
