import { useEffect, useState } from 'preact/hooks';
import type { ByokKey } from '../api/types';
import { ConfirmDialog } from '../components/confirm-dialog';
import { Page } from '../components/page';
import { ErrorNotice, InfoNotice, Loading } from '../components/status';
import { type ByokProvider, isAcceptedProviderKey, providersToShow } from '../byok/providers';
import { useServices } from '../context';
import { formatDate } from '../format/dates';
import { useAction, useResource } from '../hooks';

/**
 * Bring your own key: attach a provider's key per provider (only `sk-` keys), see it as its last 4
 * characters only (the API never returns more), switch fallback to modelmux's own keys, remove it.
 */
export function ByokPage() {
  const { api } = useServices();
  const keys = useResource(() => api.listByok());
  const [announcement, setAnnouncement] = useState<string | undefined>(undefined);
  const attached = new Map((keys.data?.data ?? []).map((k) => [k.provider, k]));
  const providers = providersToShow(keys.data?.providers, [...attached.keys()], keys.data?.served_models);
  const changed = (message: string): void => {
    setAnnouncement(message);
    keys.reload();
  };
  return (
    <Page
      title="Your provider keys"
      description="Use your own key for a provider’s models. You then pay that provider directly, and modelmux charges only its 5.5% platform fee."
    >
      {keys.state === 'error' && <ErrorNotice message={keys.error} onRetry={keys.reload} />}
      {announcement && <InfoNotice tone="success">{announcement}</InfoNotice>}
      {keys.data === undefined ? (
        keys.state === 'loading' && <Loading label="Loading your provider keys…" />
      ) : (
        <div class="byok-list">
          {providers.map((p) => (
            <ProviderCard key={p.id} provider={p} attached={attached.get(p.id)} onChanged={changed} />
          ))}
        </div>
      )}
    </Page>
  );
}

function ProviderCard({ provider, attached, onChanged }: { provider: ByokProvider; attached: ByokKey | undefined; onChanged: (message: string) => void }) {
  const titleId = `byok-${provider.id}-title`;
  return (
    <section class="card" aria-labelledby={titleId}>
      <h2 id={titleId}>{provider.name}</h2>
      {provider.models.length > 0 && <p class="field-hint">Serves {provider.models.join(', ')}.</p>}
      {attached ? <AttachedKey provider={provider} attached={attached} onChanged={onChanged} /> : <AttachForm provider={provider} onChanged={onChanged} />}
    </section>
  );
}

function AttachedKey({ provider, attached, onChanged }: { provider: ByokProvider; attached: ByokKey; onChanged: (message: string) => void }) {
  const { api } = useServices();
  const toggle = useAction();
  const removal = useAction();
  const [confirming, setConfirming] = useState(false);
  // The switch moves at once; it moves back if the API refuses the change.
  const [allow, setAllow] = useState(attached.allow_fallback);
  useEffect(() => setAllow(attached.allow_fallback), [attached.allow_fallback]);
  const switchId = `byok-${provider.id}-fallback`;
  const setFallback = async (next: boolean): Promise<void> => {
    setAllow(next);
    const saved = await toggle.run(() => api.setByokFallback(provider.id, next));
    if (!saved) {
      setAllow(!next);
      return;
    }
    setAllow(saved.allow_fallback);
    onChanged(`${provider.name}: ${saved.allow_fallback ? 'modelmux’s keys answer when yours fails' : 'only your key is used'}.`);
  };
  const remove = async (): Promise<void> => {
    const done = await removal.run(() => api.deleteByok(provider.id).then(() => true));
    if (done) {
      setConfirming(false);
      onChanged(`${provider.name}: your key is removed. modelmux’s own key serves these models again.`);
    }
  };
  return (
    <>
      <p class="byok-key">
        <span class="badge badge-ok">Attached</span> Key ending in <span class="mono byok-last4">{attached.last4}</span>
        <span class="field-hint"> · added {formatDate(attached.created_at)}</span>
      </p>
      <div class="switch-row">
        <input
          id={switchId}
          type="checkbox"
          role="switch"
          class="switch"
          checked={allow}
          disabled={toggle.busy}
          onChange={(e) => void setFallback((e.currentTarget as HTMLInputElement).checked)}
          aria-describedby={`${switchId}-hint`}
        />
        <label for={switchId}>Fall back to modelmux’s keys</label>
        <p id={`${switchId}-hint`} class="field-hint">
          When your key fails (refused, out of quota, provider down), modelmux’s own key answers and the request is billed at the normal price. Off: the request
          fails instead.
        </p>
      </div>
      {toggle.error && <ErrorNotice message={toggle.error} />}
      <button type="button" class="button button-danger-quiet" onClick={() => setConfirming(true)}>
        Remove {provider.name} key
      </button>
      {confirming && (
        <ConfirmDialog
          title={`Remove your ${provider.name} key?`}
          confirmLabel="Remove key"
          busy={removal.busy}
          error={removal.error}
          onConfirm={() => void remove()}
          onCancel={() => {
            removal.setError(undefined);
            setConfirming(false);
          }}
        >
          <p>modelmux deletes it at once and serves {provider.name} models with its own key again, at the normal price.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

function AttachForm({ provider, onChanged }: { provider: ByokProvider; onChanged: (message: string) => void }) {
  const { api } = useServices();
  const [key, setKey] = useState('');
  const [fallback, setFallback] = useState(true);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const action = useAction();
  const inputId = `byok-${provider.id}-key`;
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const value = key.trim();
    if (!isAcceptedProviderKey(value)) {
      setProblem('Only keys that begin with “sk-” can be attached.');
      return;
    }
    setProblem(undefined);
    const saved = await action.run(() => api.putByok(provider.id, value, fallback));
    if (saved) {
      setKey('');
      onChanged(`${provider.name}: your key ending in ${saved.last4} is attached.`);
    }
  };
  return (
    <form class="byok-form" onSubmit={(e) => void submit(e)} noValidate>
      <div class="field">
        <label for={inputId}>{provider.name} API key</label>
        <input
          id={inputId}
          name="key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          placeholder={provider.example}
          value={key}
          onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
          aria-invalid={problem !== undefined}
          aria-describedby={problem ? `${inputId}-error` : `${inputId}-hint`}
        />
        {problem ? (
          <p id={`${inputId}-error`} class="field-error">
            {problem}
          </p>
        ) : (
          <p id={`${inputId}-hint`} class="field-hint">
            Stored encrypted; only its last 4 characters are ever shown again.
          </p>
        )}
      </div>
      <div class="checkbox-row">
        <input id={`${inputId}-fallback`} type="checkbox" checked={fallback} onChange={(e) => setFallback((e.currentTarget as HTMLInputElement).checked)} />
        <label for={`${inputId}-fallback`}>Fall back to modelmux’s keys when mine fails</label>
      </div>
      {action.error && <ErrorNotice message={action.error} />}
      <button type="submit" class="button button-primary" disabled={action.busy}>
        {action.busy ? 'Attaching…' : `Attach ${provider.name} key`}
      </button>
    </form>
  );
}
