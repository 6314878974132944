import { useEffect, useState } from 'preact/hooks';

/**
 * Copies `text` to the clipboard (async Clipboard API; the page is a secure context: HTTPS, or
 * loopback locally) and says so for two seconds, also to screen readers. When the clipboard is
 * refused, it says so and the text stays selectable on the page.
 */
export function CopyButton({ text, label = 'Copy', class: className = '' }: { text: string; label?: string; class?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return undefined;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" class={`button button-secondary ${className}`} onClick={() => void copy()}>
        {state === 'copied' ? 'Copied' : label}
      </button>
      <span class="visually-hidden" role="status" aria-live="polite">
        {state === 'copied' ? 'Copied to the clipboard' : state === 'failed' ? 'Could not copy: select the text and copy it yourself' : ''}
      </span>
      {state === 'failed' && <span class="copy-failed">Select and copy it yourself</span>}
    </span>
  );
}
