import { useState } from 'preact/hooks';
import type { CreatedKey, KeyRecord } from '../api/types';
import { ConfirmDialog } from '../components/confirm-dialog';
import { KeyEditDialog } from '../components/key-edit-dialog';
import { KeyFields, keyFormProblem, type KeyFormValues, limitOf } from '../components/key-limit-fields';
import { KeyTable } from '../components/key-table';
import { NewKeyPanel } from '../components/new-key';
import { Page } from '../components/page';
import { Empty, ErrorNotice, InfoNotice, Loading } from '../components/status';
import { useServices } from '../context';
import { useAction, useResource } from '../hooks';

/** An account holds at most this many keys (spec: "at most 5 keys"; the API says so too: `key_limit`). */
export const KEY_LIMIT = 5;

const EMPTY_FORM: KeyFormValues = { name: '', limit: '', reset: '' };

/** Create, list, edit (name, limit), disable/enable and delete API keys. */
export function KeysPage() {
  const { api } = useServices();
  const keys = useResource(() => api.listKeys());
  const [created, setCreated] = useState<CreatedKey | undefined>(undefined);
  const [editing, setEditing] = useState<KeyRecord | undefined>(undefined);
  const [deleting, setDeleting] = useState<KeyRecord | undefined>(undefined);
  const [announcement, setAnnouncement] = useState<string | undefined>(undefined);
  const rowAction = useAction();
  const deleteAction = useAction();

  const toggle = async (key: KeyRecord): Promise<void> => {
    setAnnouncement(undefined);
    const updated = await rowAction.run(() => api.updateKey(key.hash, { disabled: !key.disabled }));
    if (updated) {
      setAnnouncement(`Key “${updated.name}” is ${updated.disabled ? 'disabled: requests with it are refused' : 'enabled again'}.`);
      keys.reload();
    }
  };
  const remove = async (): Promise<void> => {
    const key = deleting;
    if (key === undefined) return;
    const done = await deleteAction.run(() => api.deleteKey(key.hash).then(() => true));
    if (done) {
      setDeleting(undefined);
      setAnnouncement(`Key “${key.name}” is deleted.`);
      keys.reload();
    }
  };

  const count = keys.data?.length ?? 0;
  return (
    <Page title="API keys" description={`Keys let your apps call the API. An account can hold up to ${KEY_LIMIT} keys.`}>
      {created ? (
        <NewKeyPanel created={created} onDone={() => setCreated(undefined)} />
      ) : (
        <CreateKeyCard
          atLimit={count >= KEY_LIMIT}
          onCreated={(c) => {
            setAnnouncement(undefined);
            setCreated(c);
            keys.reload();
          }}
        />
      )}
      <section class="card" aria-labelledby="keys-title" aria-busy={keys.state === 'loading'}>
        <h2 id="keys-title">Your keys{keys.data ? ` (${count} of ${KEY_LIMIT})` : ''}</h2>
        {announcement && <InfoNotice tone="success">{announcement}</InfoNotice>}
        {rowAction.error && <ErrorNotice message={rowAction.error} />}
        {keys.state === 'error' && <ErrorNotice message={keys.error} onRetry={keys.reload} />}
        {keys.data === undefined ? (
          keys.state === 'loading' && <Loading label="Loading your keys…" />
        ) : keys.data.length === 0 ? (
          <Empty title="No keys yet">
            <p>Create one above, then use it as the API key of any OpenAI SDK.</p>
          </Empty>
        ) : (
          <KeyTable keys={keys.data} busy={rowAction.busy} onEdit={setEditing} onToggle={(k) => void toggle(k)} onDelete={setDeleting} />
        )}
      </section>
      {editing && (
        <KeyEditDialog
          keyRecord={editing}
          onClose={() => setEditing(undefined)}
          onSaved={(k) => {
            setEditing(undefined);
            setAnnouncement(`Key “${k.name}” is saved.`);
            keys.reload();
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete the key “${deleting.name}”?`}
          confirmLabel="Delete key"
          busy={deleteAction.busy}
          error={deleteAction.error}
          onConfirm={() => void remove()}
          onCancel={() => {
            deleteAction.setError(undefined);
            setDeleting(undefined);
          }}
        >
          <p>
            Apps using <span class="mono">{deleting.label}</span> stop working at once. This cannot be undone. Its usage stays in your history.
          </p>
        </ConfirmDialog>
      )}
    </Page>
  );
}

/** The create form. At the limit it explains why; the API's own refusal is shown if one is sent anyway. */
function CreateKeyCard({ atLimit, onCreated }: { atLimit: boolean; onCreated: (created: CreatedKey) => void }) {
  const { api } = useServices();
  const [values, setValues] = useState<KeyFormValues>(EMPTY_FORM);
  const [problem, setProblem] = useState<ReturnType<typeof keyFormProblem>>(undefined);
  const action = useAction();
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const found = keyFormProblem(values);
    setProblem(found);
    if (found) return;
    const limit = limitOf(values);
    const created = await action.run(() =>
      api.createKey({ name: values.name.trim(), limit, limit_reset: limit === null || values.reset === '' ? null : values.reset }),
    );
    if (created) {
      setValues(EMPTY_FORM);
      onCreated(created);
    }
  };
  return (
    <section class="card" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      {atLimit && (
        <InfoNotice tone="warning">
          You have {KEY_LIMIT} keys, the most an account can hold. Delete a key you no longer use to make room for a new one.
        </InfoNotice>
      )}
      <form onSubmit={(e) => void submit(e)} noValidate>
        <KeyFields idPrefix="create" values={values} onChange={setValues} problem={problem} />
        {action.error && <ErrorNotice message={action.error} />}
        <button type="submit" class="button button-primary" disabled={action.busy}>
          {action.busy ? 'Creating…' : 'Create key'}
        </button>
      </form>
    </section>
  );
}
