import { useEffect, useRef, useState } from 'preact/hooks';
import type { KeyRecord } from '../api/types';
import { useServices } from '../context';
import { useAction } from '../hooks';
import { KeyFields, keyFormProblem, type KeyFormValues, limitOf } from './key-limit-fields';
import { ErrorNotice } from './status';

/** Rename a key and change its limit, in a modal dialog (native <dialog>: Escape closes it). */
export function KeyEditDialog({ keyRecord, onClose, onSaved }: { keyRecord: KeyRecord; onClose: () => void; onSaved: (k: KeyRecord) => void }) {
  const { api } = useServices();
  const ref = useRef<HTMLDialogElement>(null);
  const [values, setValues] = useState<KeyFormValues>({
    name: keyRecord.name,
    limit: keyRecord.limit === null ? '' : String(keyRecord.limit),
    reset: keyRecord.limit_reset ?? '',
  });
  const [problem, setProblem] = useState<ReturnType<typeof keyFormProblem>>(undefined);
  const action = useAction();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const found = keyFormProblem(values);
    setProblem(found);
    if (found) return;
    const limit = limitOf(values);
    const saved = await action.run(() =>
      api.updateKey(keyRecord.hash, { name: values.name.trim(), limit, limit_reset: limit === null || values.reset === '' ? null : values.reset }),
    );
    if (saved) onSaved(saved);
  };
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby="edit-title"
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <h2 id="edit-title">Edit “{keyRecord.name}”</h2>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <KeyFields idPrefix="edit" values={values} onChange={setValues} problem={problem} />
        {action.error && <ErrorNotice message={action.error} />}
        <div class="dialog-actions">
          <button type="button" class="button button-secondary" onClick={onClose} disabled={action.busy}>
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={action.busy}>
            {action.busy ? 'Saving…' : 'Save'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
