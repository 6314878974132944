import { useState } from 'preact/hooks';
import { pending } from '../auth/pending';
import { Field, valueOf } from '../components/field';
import { ErrorNotice, InfoNotice } from '../components/status';
import { useServices } from '../context';
import { useAction } from '../hooks';
import { href, navigate } from '../router';
import { AuthLayout, PasswordInput } from './auth-layout';
import { PASSWORD_HINT } from './sign-up';

/** Two steps: the email gets a code; the code and a new password reset it. */
export function ForgotPasswordPage() {
  const { cognito } = useServices();
  const [step, setStep] = useState<'email' | 'reset'>('email');
  const [email, setEmail] = useState(pending.email);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const sendCode = async (e: Event): Promise<void> => {
    e.preventDefault();
    if ((await action.run(() => cognito.forgotPassword(email.trim()).then(() => true))) === true) setStep('reset');
  };
  const reset = async (e: Event): Promise<void> => {
    e.preventDefault();
    const done = await action.run(() => cognito.confirmForgotPassword(email.trim(), code.trim(), password).then(() => true));
    if (done !== true) return;
    pending.email = email.trim();
    pending.flash = 'Your password is changed. Sign in with the new one.';
    navigate('sign-in');
  };
  return (
    <AuthLayout
      title="Reset your password"
      footer={
        <>
          Remembered it? <a href={href('sign-in')}>Sign in</a>
        </>
      }
    >
      {step === 'email' ? (
        <form onSubmit={(e) => void sendCode(e)}>
          <p class="lead">We will email you a code to choose a new password.</p>
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
          {action.error && <ErrorNotice message={action.error} />}
          <button type="submit" class="button button-primary button-block" disabled={action.busy}>
            {action.busy ? 'Sending…' : 'Send the code'}
          </button>
        </form>
      ) : (
        <form onSubmit={(e) => void reset(e)}>
          <InfoNotice>If an account exists for {email.trim()}, we sent it a code.</InfoNotice>
          <Field id="code" label="Code from the email">
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
          <Field id="new-password" label="New password" hint={PASSWORD_HINT}>
            {(d) => <PasswordInput id="new-password" value={password} onInput={setPassword} autoComplete="new-password" describedBy={d} />}
          </Field>
          {action.error && <ErrorNotice message={action.error} />}
          <button type="submit" class="button button-primary button-block" disabled={action.busy}>
            {action.busy ? 'Saving…' : 'Set the new password'}
          </button>
          <p class="auth-links">
            <button type="button" class="button-link" onClick={() => setStep('email')}>
              Send another code
            </button>
          </p>
        </form>
      )}
    </AuthLayout>
  );
}
