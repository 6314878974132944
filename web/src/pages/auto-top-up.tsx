import { useState } from 'preact/hooks';
import type { AutoTopUp } from '../api/types';
import { Field, valueOf } from '../components/field';
import { ErrorNotice, InfoNotice, Loading } from '../components/status';
import { useServices } from '../context';
import { useAction, useResource } from '../hooks';

/** A dollar amount typed by the user, or undefined when it is not one. */
const dollars = (text: string): number | undefined => (/^\d+(\.\d{1,6})?$/.test(text.trim()) ? Number(text) : undefined);
const shown = (usd: number | null, fallback: string): string => (usd === null ? fallback : String(usd));

/** Auto top-up (threshold, amount, monthly cap on the saved card) and the low-balance email. */
export function AutoTopUpCard() {
  const { api } = useServices();
  const settings = useResource(() => api.autoTopUp());
  return (
    <section class="card" aria-labelledby="auto-top-up-title" aria-busy={settings.state === 'loading'}>
      <h2 id="auto-top-up-title">Auto top-up and alerts</h2>
      {settings.state === 'error' && <ErrorNotice message={settings.error} onRetry={settings.reload} />}
      {settings.data === undefined ? settings.state === 'loading' && <Loading label="Loading your settings…" /> : <Forms initial={settings.data} />}
    </section>
  );
}

function Forms({ initial }: { initial: AutoTopUp }) {
  const { api } = useServices();
  const [current, setCurrent] = useState(initial);
  const [enabled, setEnabled] = useState(initial.enabled);
  const [threshold, setThreshold] = useState(shown(initial.threshold_usd, '5'));
  const [amount, setAmount] = useState(shown(initial.amount_usd, '10'));
  const [cap, setCap] = useState(shown(initial.monthly_cap_usd, '100'));
  const [alertAt, setAlertAt] = useState(shown(initial.low_balance_alert_usd, ''));
  const [saved, setSaved] = useState<string | undefined>(undefined);
  const save = useAction();
  const saveAlert = useAction();
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const [t, a, c] = [dollars(threshold), dollars(amount), dollars(cap)];
    if (t === undefined || a === undefined || c === undefined) return save.setError('Enter dollar amounts, such as 5 or 12.50.');
    const next = await save.run(() => api.setAutoTopUp({ enabled, threshold_usd: t, amount_usd: a, monthly_cap_usd: c }));
    if (next === undefined) return;
    setCurrent(next);
    setSaved('Auto top-up saved.');
  };
  const submitAlert = async (e: Event): Promise<void> => {
    e.preventDefault();
    const usd = alertAt.trim() === '' ? null : dollars(alertAt);
    if (usd === undefined) return saveAlert.setError('Enter a dollar amount, or leave it empty for no email.');
    const next = await saveAlert.run(() => api.setLowBalanceAlert(usd));
    if (next === undefined) return;
    setCurrent(next);
    setSaved(usd === null ? 'Low-balance email turned off.' : 'Low-balance email saved.');
  };
  return (
    <>
      <p>
        When your credit falls under the threshold, your saved card is charged the amount (at most the monthly cap each calendar month). Credit is added once
        Stripe confirms the payment. This month: ${current.month_to_date_usd.toFixed(2)}.
      </p>
      {current.payment_method === null && <InfoNotice>No saved card yet: add credit above with "Save this card for auto top-up" first.</InfoNotice>}
      {current.paused && (
        <InfoNotice tone="warning">Auto top-up is paused: {current.paused_reason ?? 'a payment failed.'} Save it turned on to try again.</InfoNotice>
      )}
      {saved && <InfoNotice tone="success">{saved}</InfoNotice>}
      <form onSubmit={(e) => void submit(e)} noValidate aria-label="Auto top-up">
        <div class="checkbox-row">
          <input id="auto-top-up-enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.currentTarget as HTMLInputElement).checked)} />
          <label for="auto-top-up-enabled">Turn on auto top-up</label>
        </div>
        <Field id="auto-top-up-threshold" label="When credit falls under (USD)">
          {(d) => <input id="auto-top-up-threshold" inputMode="decimal" value={threshold} aria-describedby={d} onInput={(e) => setThreshold(valueOf(e))} />}
        </Field>
        <Field id="auto-top-up-amount" label="Add (USD)" hint="From $5.">
          {(d) => <input id="auto-top-up-amount" inputMode="decimal" value={amount} aria-describedby={d} onInput={(e) => setAmount(valueOf(e))} />}
        </Field>
        <Field id="auto-top-up-cap" label="At most per month (USD)">
          {(d) => <input id="auto-top-up-cap" inputMode="decimal" value={cap} aria-describedby={d} onInput={(e) => setCap(valueOf(e))} />}
        </Field>
        {save.error && <ErrorNotice message={save.error} />}
        <button type="submit" class="button button-primary" disabled={save.busy}>
          Save auto top-up
        </button>
      </form>
      <form onSubmit={(e) => void submitAlert(e)} noValidate aria-label="Low-balance email">
        <Field id="low-balance-alert" label="Email me when credit falls under (USD)" hint="Once each time it falls under; empty for no email.">
          {(d) => <input id="low-balance-alert" inputMode="decimal" value={alertAt} aria-describedby={d} onInput={(e) => setAlertAt(valueOf(e))} />}
        </Field>
        {saveAlert.error && <ErrorNotice message={saveAlert.error} />}
        <button type="submit" class="button button-secondary" disabled={saveAlert.busy}>
          Save email alert
        </button>
      </form>
    </>
  );
}
