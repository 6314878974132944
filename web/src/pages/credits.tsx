import { useState } from 'preact/hooks';
import type { Account, Purchase } from '../api/types';
import { Field, valueOf } from '../components/field';
import { Page } from '../components/page';
import { Empty, ErrorNotice, InfoNotice, Loading } from '../components/status';
import { useServices } from '../context';
import { formatUsd } from '../format/money';
import { useAction, useResource } from '../hooks';
import { AutoTopUpCard } from './auto-top-up';

/** Preset amounts, USD. */
const PRESETS = [10, 25, 50, 100] as const;
/** The smallest top-up, USD (the API's `MIN_TOP_UP_USD`). */
export const MIN_TOP_UP_USD = 5;
/** The largest top-up in one payment, USD (the API's `MAX_TOP_UP_USD`). */
export const MAX_TOP_UP_USD = 10_000;

const KIND_LABEL: Record<Purchase['kind'], string> = { top_up: 'Top-up', auto_top_up: 'Auto top-up', refund: 'Refund', dispute: 'Dispute' };

/** Add credit through Stripe Checkout, and the history of payments with their receipts. */
export function CreditsPage() {
  const { api } = useServices();
  const account = useResource(() => api.account());
  const purchases = useResource(() => api.purchases());
  return (
    <Page title="Credits" description="Buy credit for paid usage, and see what you have bought.">
      {account.state === 'error' && <ErrorNotice message={account.error} onRetry={account.reload} />}
      {account.data ? <AddCredit account={account.data} /> : account.state === 'loading' && <Loading label="Loading your balance…" />}
      {account.data?.payments_enabled && <AutoTopUpCard />}
      <section class="card" aria-labelledby="purchases-title" aria-busy={purchases.state === 'loading'}>
        <h2 id="purchases-title">Purchases</h2>
        <p class="credits-note">Credit appears here once Stripe confirms the payment (usually within seconds of paying).</p>
        {purchases.state === 'error' && <ErrorNotice message={purchases.error} onRetry={purchases.reload} />}
        {purchases.data === undefined ? (
          purchases.state === 'loading' && <Loading label="Loading your purchases…" />
        ) : purchases.data.length === 0 ? (
          <Empty title="No purchases yet" />
        ) : (
          <PurchaseTable purchases={purchases.data} />
        )}
        <button
          type="button"
          class="button button-secondary"
          onClick={() => {
            account.reload();
            purchases.reload();
          }}
        >
          Refresh
        </button>
      </section>
    </Page>
  );
}

/** Preset and custom amounts; sends the browser to Stripe's checkout page. */
function AddCredit({ account }: { account: Account }) {
  const { api } = useServices();
  const [amount, setAmount] = useState('10');
  const [saveCard, setSaveCard] = useState(false);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const action = useAction();
  if (!account.payments_enabled) {
    return (
      <section class="card" aria-labelledby="add-credit-title">
        <h2 id="add-credit-title">Add credit</h2>
        <InfoNotice tone="info">Payments are not enabled on this deployment. Ask its operator to add credit to your account.</InfoNotice>
      </section>
    );
  }
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const usd = Number(amount);
    const found = !/^\d+(\.\d{1,2})?$/.test(amount.trim())
      ? 'Enter a dollar amount, such as 10 or 12.50.'
      : usd < MIN_TOP_UP_USD || usd > MAX_TOP_UP_USD
        ? `Enter an amount from $${MIN_TOP_UP_USD} to $${MAX_TOP_UP_USD.toLocaleString('en-US')}.`
        : undefined;
    setProblem(found);
    if (found) return;
    const session = await action.run(() => api.checkout(usd, saveCard));
    if (session) location.assign(session.url);
  };
  return (
    <section class="card" aria-labelledby="add-credit-title">
      <h2 id="add-credit-title">Add credit</h2>
      <p>
        Credit now: <strong>{formatUsd(account.credit_nano_usd)}</strong>. Pay by card through Stripe; <strong>$10 paid is $10 of credit</strong>: the service
        fee is already in the token prices. Credit never expires.
      </p>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <div class="preset-row" role="group" aria-label="Preset amounts">
          {PRESETS.map((p) => (
            <button
              key={p}
              type="button"
              class={`button ${amount === String(p) ? 'button-primary' : 'button-secondary'}`}
              aria-pressed={amount === String(p)}
              onClick={() => setAmount(String(p))}
            >
              ${p}
            </button>
          ))}
        </div>
        <Field id="credit-amount" label="Amount (USD)" hint={`From $${MIN_TOP_UP_USD}.`} error={problem}>
          {(describedBy) => (
            <input
              id="credit-amount"
              inputMode="decimal"
              value={amount}
              aria-describedby={describedBy}
              aria-invalid={problem !== undefined}
              onInput={(e) => setAmount(valueOf(e))}
            />
          )}
        </Field>
        <div class="checkbox-row">
          <input id="save-card" type="checkbox" checked={saveCard} onChange={(e) => setSaveCard((e.currentTarget as HTMLInputElement).checked)} />
          <label for="save-card">Save this card for auto top-up</label>
        </div>
        {action.error && <ErrorNotice message={action.error} />}
        <button type="submit" class="button button-primary" disabled={action.busy}>
          {action.busy ? 'Opening checkout…' : `Add $${Number(amount) > 0 ? Number(amount).toFixed(2) : '…'} of credit`}
        </button>
      </form>
    </section>
  );
}

function PurchaseTable({ purchases }: { purchases: Purchase[] }) {
  return (
    <div class="table-wrap">
      <table class="table">
        <thead>
          <tr>
            <th scope="col">Date</th>
            <th scope="col">Kind</th>
            <th scope="col">Amount</th>
            <th scope="col">Receipt</th>
          </tr>
        </thead>
        <tbody>
          {purchases.map((p) => (
            <tr key={p.id}>
              <td>{new Date(p.created_at).toLocaleString()}</td>
              <td>{KIND_LABEL[p.kind]}</td>
              <td>{formatUsd(p.amount_nano_usd)}</td>
              <td>
                {p.receipt_url ? (
                  <a href={p.receipt_url} rel="noopener noreferrer" target="_blank">
                    Receipt
                  </a>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
