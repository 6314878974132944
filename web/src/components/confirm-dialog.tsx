import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A modal confirmation on the native <dialog> (focus is trapped and Escape cancels, by the browser).
 * Focus starts on Cancel, so Enter never confirms a destructive action by accident.
 */
export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  busy?: boolean;
  error?: string | undefined;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    cancelRef.current?.focus();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby="dialog-title"
      aria-describedby="dialog-body"
      onCancel={(e) => {
        e.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id="dialog-title">{props.title}</h2>
      <div id="dialog-body">{props.children}</div>
      {props.error && (
        <p class="field-error" role="alert">
          {props.error}
        </p>
      )}
      <div class="dialog-actions">
        <button ref={cancelRef} type="button" class="button button-secondary" onClick={props.onCancel} disabled={props.busy}>
          Cancel
        </button>
        <button type="button" class="button button-danger" onClick={props.onConfirm} disabled={props.busy}>
          {props.busy ? 'Working…' : props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
