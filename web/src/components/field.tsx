import type { ComponentChildren } from 'preact';

/**
 * A labelled form field: the label is tied to the control by id, and the hint and error by
 * aria-describedby, so screen readers read all three.
 */
export function Field(props: {
  id: string;
  label: string;
  hint?: string | undefined;
  error?: string | undefined;
  children: (describedBy: string | undefined) => ComponentChildren;
}) {
  const ids = [props.hint ? `${props.id}-hint` : '', props.error ? `${props.id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children(ids)}
      {props.hint && (
        <p id={`${props.id}-hint`} class="field-hint">
          {props.hint}
        </p>
      )}
      {props.error && (
        <p id={`${props.id}-error`} class="field-error">
          {props.error}
        </p>
      )}
    </div>
  );
}

/** Reads a text input's value in an input handler. */
export function valueOf(event: Event): string {
  return (event.currentTarget as HTMLInputElement).value;
}
