import { useState } from 'preact/hooks';
import { pending } from '../auth/pending';
import { Field, valueOf } from '../components/field';
import { ErrorNotice } from '../components/status';
import { useServices } from '../context';
import { useAction } from '../hooks';
import { href, navigate } from '../router';
import { AuthLayout, PasswordInput } from './auth-layout';

/** The pool's password rule, as people need to hear it before they pick one. */
export const PASSWORD_HINT = 'At least 12 characters, with upper- and lower-case letters, a number and a symbol.';

/** Email and password → a confirmation code is emailed → the confirm page. */
export function SignUpPage() {
  const { cognito, session } = useServices();
  const [email, setEmail] = useState(pending.email);
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    await action.run(async () => {
      const address = email.trim();
      const { confirmed } = await cognito.signUp(address, password);
      pending.email = address;
      if (confirmed) {
        await session.signIn(address, password);
        return;
      }
      pending.password = password;
      pending.flash = `We sent a confirmation code to ${address}.`;
      navigate('confirm');
    });
  };
  return (
    <AuthLayout
      title="Create your account"
      footer={
        <>
          Already have an account? <a href={href('sign-in')}>Sign in</a>
        </>
      }
    >
      <p class="lead">New accounts get 200,000 free tokens, no card needed.</p>
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
        <Field id="password" label="Password" hint={PASSWORD_HINT}>
          {(d) => <PasswordInput id="password" value={password} onInput={setPassword} autoComplete="new-password" describedBy={d} />}
        </Field>
        {action.error && <ErrorNotice message={action.error} />}
        <button type="submit" class="button button-primary button-block" disabled={action.busy}>
          {action.busy ? 'Creating…' : 'Create account'}
        </button>
      </form>
    </AuthLayout>
  );
}
