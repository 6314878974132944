import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useServices } from './context';
import { ByokPage } from './pages/byok';
import { ConfirmPage } from './pages/confirm';
import { CreditsPage } from './pages/credits';
import { ForgotPasswordPage } from './pages/forgot-password';
import { KeysPage } from './pages/keys';
import { OverviewPage } from './pages/overview';
import { SignInPage } from './pages/sign-in';
import { SignUpPage } from './pages/sign-up';
import { UsagePage } from './pages/usage';
import { pending } from './auth/pending';
import { APP_ROUTES, AUTH_ROUTES, href, navigate, type Route, useRoute } from './router';

const NAV: ReadonlyArray<{ route: Route; label: string }> = [
  { route: 'overview', label: 'Overview' },
  { route: 'credits', label: 'Credits' },
  { route: 'keys', label: 'API keys' },
  { route: 'usage', label: 'Usage' },
  { route: 'byok', label: 'Provider keys' },
];

/** Re-renders when the user signs in or out. */
function useSignedIn(): boolean {
  const { session } = useServices();
  const [signedIn, setSignedIn] = useState(session.signedIn);
  useEffect(() => {
    const unsubscribe = session.subscribe(() => setSignedIn(session.signedIn));
    // The session may have ended between the first render and this subscription (a refused refresh).
    setSignedIn(session.signedIn);
    return unsubscribe;
  }, [session]);
  return signedIn;
}

/**
 * The app: signed-out visitors get the sign-in pages, signed-in users the dashboard. A signed-out
 * visitor on a dashboard page is sent to sign-in; a signed-in one on a sign-in page to the overview.
 */
export function App() {
  const route = useRoute();
  const signedIn = useSignedIn();
  const misplaced = signedIn ? AUTH_ROUTES.includes(route) : APP_ROUTES.includes(route);
  useEffect(() => {
    if (misplaced) navigate(signedIn ? 'overview' : 'sign-in', true);
  }, [misplaced, signedIn]);
  if (misplaced) return null;
  if (!signedIn) {
    switch (route) {
      case 'sign-up':
        return <SignUpPage />;
      case 'confirm':
        return <ConfirmPage />;
      case 'forgot-password':
        return <ForgotPasswordPage />;
      default:
        return <SignInPage />;
    }
  }
  return (
    <Shell route={route}>
      {route === 'credits' ? (
        <CreditsPage />
      ) : route === 'keys' ? (
        <KeysPage />
      ) : route === 'usage' ? (
        <UsagePage />
      ) : route === 'byok' ? (
        <ByokPage />
      ) : (
        <OverviewPage />
      )}
    </Shell>
  );
}

/** Top bar (brand, navigation, who is signed in, sign out) and the main region. */
function Shell({ route, children }: { route: Route; children: ComponentChildren }) {
  const { session } = useServices();
  const [signingOut, setSigningOut] = useState(false);
  const signOut = async (): Promise<void> => {
    setSigningOut(true);
    pending.email = session.email ?? '';
    pending.flash = 'You are signed out.';
    await session.signOut();
  };
  const skip = (e: Event): void => {
    // The hash is the router's: move focus to the main region without touching it.
    e.preventDefault();
    document.getElementById('page-title')?.focus();
  };
  return (
    <>
      <a class="skip-link" href="#main" onClick={skip}>
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={href('overview')}>
          <span class="brand-mark" aria-hidden="true">
            ◆
          </span>{' '}
          modelmux
        </a>
        <nav aria-label="Dashboard" class="nav">
          <ul>
            {NAV.map((item) => (
              <li key={item.route}>
                <a href={href(item.route)} aria-current={route === item.route ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account-menu">
          <span class="account-email" title={session.email}>
            {session.email}
          </span>
          <button type="button" class="button button-secondary button-small" onClick={() => void signOut()} disabled={signingOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" class="main" key={route}>
        {children}
      </main>
    </>
  );
}
