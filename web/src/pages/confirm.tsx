import { useState } from 'preact/hooks';
import { pending } from '../auth/pending';
import { Field, valueOf } from '../components/field';
import { ErrorNotice, InfoNotice } from '../components/status';
import { useServices } from '../context';
import { useAction } from '../hooks';
import { href, navigate } from '../router';
import { AuthLayout } from './auth-layout';

/** The emailed code → the email is confirmed → signed in (or to sign-in after a reload). */
export function ConfirmPage() {
  const { cognito, session } = useServices();
  const [email, setEmail] = useState(pending.email);
  const [code, setCode] = useState('');
  const [resent, setResent] = useState(false);
  const action = useAction();
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    await action.run(async () => {
      const address = email.trim();
      await cognito.confirmSignUp(address, code.trim());
      const password = pending.password;
      pending.password = undefined;
      if (password !== undefined && pending.email === address) {
        await session.signIn(address, password);
        return;
      }
      pending.email = address;
      pending.flash = 'Your email is confirmed. Sign in to continue.';
      navigate('sign-in');
    });
  };
  const resend = async (): Promise<void> => {
    setResent(false);
    if ((await action.run(() => cognito.resendConfirmationCode(email.trim()).then(() => true))) === true) setResent(true);
  };
  return (
    <AuthLayout
      title="Confirm your email"
      footer={
        <>
          Wrong address? <a href={href('sign-up')}>Start again</a>
        </>
      }
    >
      <form onSubmit={(e) => void submit(e)}>
        <Field id="email" label="Email">
          {(d) => (
            <input
              id="email"
              name="email"
              type="email"
              required
              autoComplete="username"
              value={email}
              onInput={(e) => setEmail(valueOf(e))}
              aria-describedby={d}
              spellcheck={false}
              autoCapitalize="off"
            />
          )}
        </Field>
        <Field id="code" label="Confirmation code" hint="The 6-digit code in the email we sent you.">
          {(d) => (
            <input
              id="code"
              name="code"
              type="text"
              inputMode="numeric"
              required
              autoComplete="one-time-code"
              value={code}
              onInput={(e) => setCode(valueOf(e))}
              aria-describedby={d}
            />
          )}
        </Field>
        {action.error && <ErrorNotice message={action.error} />}
        {resent && <InfoNotice tone="success">We sent a new code.</InfoNotice>}
        <button type="submit" class="button button-primary button-block" disabled={action.busy}>
          {action.busy ? 'Confirming…' : 'Confirm'}
        </button>
      </form>
      <p class="auth-links">
        <button type="button" class="button-link" onClick={() => void resend()} disabled={action.busy || email.trim() === ''}>
          Send a new code
        </button>
      </p>
    </AuthLayout>
  );
}
