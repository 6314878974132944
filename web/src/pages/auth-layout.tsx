import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { takeFlash } from '../auth/pending';
import { InfoNotice } from '../components/status';
import { useTitle } from '../hooks';

/** The frame of the signed-out pages: the brand, a heading (focused on arrival) and a card. */
export function AuthLayout({ title, children, footer }: { title: string; children: ComponentChildren; footer?: ComponentChildren }) {
  useTitle(title);
  const [flash] = useState(takeFlash);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <main id="main" class="auth">
      <p class="brand brand-large">
        <span class="brand-mark" aria-hidden="true">
          ◆
        </span>{' '}
        modelmux
      </p>
      <section class="card auth-card" aria-labelledby="page-title">
        <h1 id="page-title" tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {flash && <InfoNotice tone="success">{flash}</InfoNotice>}
        {children}
      </section>
      {footer && <p class="auth-footer">{footer}</p>}
    </main>
  );
}

/** A password input with a "show" switch (people mistype what they cannot see). */
export function PasswordInput(props: {
  id: string;
  value: string;
  onInput: (value: string) => void;
  autoComplete: 'current-password' | 'new-password';
  describedBy?: string | undefined;
}) {
  const [shown, setShown] = useState(false);
  return (
    <div class="password">
      <input
        id={props.id}
        name={props.id}
        // A union here does not fit preact's per-type input props; both values are valid.
        type={(shown ? 'text' : 'password') as 'password'}
        required
        autoComplete={props.autoComplete}
        value={props.value}
        onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)}
        aria-describedby={props.describedBy}
        spellcheck={false}
        autoCapitalize="off"
      />
      <button type="button" class="button button-ghost" aria-pressed={shown} aria-controls={props.id} onClick={() => setShown(!shown)}>
        {shown ? 'Hide' : 'Show'}
      </button>
    </div>
  );
}
