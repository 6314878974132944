/**
 * Delivers events to the gateway's webhook endpoint the way Stripe does (docs.stripe.com/webhooks):
 * a POST of the event's JSON with a `Stripe-Signature` header (`t=<ts>,v1=<HMAC-SHA256>`), made with
 * the official SDK's `webhooks.generateTestHeaderString`; any non-2xx answer or network error is
 * retried with backoff (Stripe retries for up to 3 days; here a few attempts over ~a minute), and
 * deliveries are not ordered.
 */
import Stripe from 'stripe';

/** One delivery's record (tests read them). */
export interface Delivery {
  eventId: string;
  type: string;
  /** Answers' statuses, in order (0 = no answer). */
  statuses: number[];
  done: boolean;
}

/** The delivery loop of one stand-in. */
export interface WebhookSender {
  /** Where events go (set once the gateway listens). */
  url: string | undefined;
  readonly deliveries: Delivery[];
  /** Sends `event` in the background, retrying as Stripe does. */
  send(event: Record<string, unknown>): void;
  /** Resolves when every delivery so far has ended (success or out of attempts). */
  idle(): Promise<void>;
  close(): void;
}

/** Delays between attempts, ms. */
const RETRY_DELAYS_MS = [250, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

/** A sender signing with `secret`; `retryDelaysMs` overrides the backoff (tests). */
export function createWebhookSender(secret: string, retryDelaysMs: readonly number[] = RETRY_DELAYS_MS): WebhookSender {
  const signer = new Stripe('sk_test_signer_only');
  const inFlight = new Set<Promise<void>>();
  let closed = false;
  const sender: WebhookSender = {
    url: undefined,
    deliveries: [],
    send(event) {
      const record: Delivery = { eventId: String(event.id), type: String(event.type), statuses: [], done: false };
      sender.deliveries.push(record);
      const run = deliver(JSON.stringify(event), record).finally(() => inFlight.delete(run));
      inFlight.add(run);
    },
    async idle() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    close() {
      closed = true;
    },
  };
  const deliver = async (payload: string, record: Delivery): Promise<void> => {
    for (let attempt = 0; attempt <= retryDelaysMs.length && !closed; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, retryDelaysMs[attempt - 1]));
      if (sender.url === undefined) continue;
      const header = signer.webhooks.generateTestHeaderString({ payload, secret });
      const status = await fetch(sender.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'stripe-signature': header,
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        },
        body: payload,
      })
        .then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        })
        .catch(() => 0);
      record.statuses.push(status);
      if (status >= 200 && status < 300) break;
    }
    record.done = true;
  };
  return sender;
}
