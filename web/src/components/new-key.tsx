import { useEffect, useRef } from 'preact/hooks';
import type { CreatedKey } from '../api/types';
import { CopyButton } from './copy-button';

/**
 * The new key, shown ONCE: the API returns it only in the create answer and keeps only its hash.
 * It lives in this component's props and nowhere else (no storage, no URL, no log), and is gone when
 * the user closes the panel or leaves the page.
 */
export function NewKeyPanel({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section class="card new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title" tabIndex={-1} ref={heading}>
        Your new key “{created.data.name}”
      </h2>
      <p class="warning-text">
        <strong>Copy it now. You will not see it again:</strong> modelmux keeps only a fingerprint of it. If you lose it, delete it and create another.
      </p>
      <div class="secret">
        <label for="new-key-value" class="visually-hidden">
          New API key
        </label>
        <input
          id="new-key-value"
          class="mono secret-value"
          type="text"
          readOnly
          value={created.key}
          spellcheck={false}
          autoComplete="off"
          onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
        />
        <CopyButton text={created.key} label="Copy key" />
      </div>
      <p class="field-hint">Store it in an environment variable such as MODELMUX_API_KEY, never in code or a public repository.</p>
      <button type="button" class="button button-primary" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}
