import type { ComponentChildren } from 'preact';

/** A polite "Loading…" announcement with a placeholder block. */
export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

/** An error in words, announced at once, with an optional retry. */
export function ErrorNotice({ message, onRetry }: { message: string; onRetry?: () => void }) {
  return (
    <div class="notice notice-error" role="alert">
      <p>{message}</p>
      {onRetry && (
        <button type="button" class="button button-secondary" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** A success or information message, announced politely. */
export function InfoNotice({ children, tone = 'info' }: { children: ComponentChildren; tone?: 'info' | 'success' | 'warning' }) {
  return (
    <div class={`notice notice-${tone}`} role="status">
      {children}
    </div>
  );
}

/** What a list shows when it has nothing yet. */
export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children}
    </div>
  );
}
