import { useState } from 'preact/hooks';
import { ApiError } from '../api/api-error';
import { pending } from '../auth/pending';
import { Field, valueOf } from '../components/field';
import { ErrorNotice } from '../components/status';
import { useServices } from '../context';
import { useAction } from '../hooks';
import { href, navigate } from '../router';
import { AuthLayout, PasswordInput } from './auth-layout';

/** Email and password → signed in (the app then shows the overview). */
export function SignInPage() {
  const { session } = useServices();
  const [email, setEmail] = useState(pending.email);
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    await action.run(async () => {
      try {
        await session.signIn(email.trim(), password);
      } catch (error) {
        if (error instanceof ApiError && error.code === 'UserNotConfirmedException') {
          pending.email = email.trim();
          pending.password = password;
          pending.flash = 'Your email is not confirmed yet. Enter the code we sent you.';
          navigate('confirm');
          return;
        }
        throw error;
      }
    });
  };
  return (
    <AuthLayout
      title="Sign in"
      footer={
        <>
          New here? <a href={href('sign-up')}>Create an account</a> and get 200,000 free tokens.
        </>
      }
    >
      <form onSubmit={(e) => void submit(e)} noValidate={false}>
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
        <Field id="password" label="Password">
          {(d) => <PasswordInput id="password" value={password} onInput={setPassword} autoComplete="current-password" describedBy={d} />}
        </Field>
        {action.error && <ErrorNotice message={action.error} />}
        <button type="submit" class="button button-primary button-block" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="auth-links">
        <a href={href('forgot-password')}>Forgot your password?</a>
      </p>
    </AuthLayout>
  );
}
