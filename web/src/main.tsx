import { render } from 'preact';
import { createAccountApi, loadSiteConfig } from './api/account-api';
import { errorMessage } from './api/api-error';
import type { Account, SiteConfig } from './api/types';
import { createCognitoClient, type CognitoClient } from './auth/cognito';
import { Session } from './auth/session';
import { App } from './app';
import { ServicesContext } from './context';
import { routeOf } from './router';

/**
 * Boot. The session (this tab's sessionStorage) and the account API client need nothing from the
 * server, so a returning user's overview data is asked for at once, in parallel with /config.json
 * (where the user pool is; index.html preloads it). Cognito is needed only to sign in or refresh.
 */
async function boot(root: HTMLElement): Promise<void> {
  const configReady = loadSiteConfig();
  let cognito: Promise<CognitoClient> | undefined;
  const lazyCognito = (): Promise<CognitoClient> => (cognito ??= configReady.then((c) => createCognitoClient(c)));
  const session = new Session(lazyCognito, sessionStorage);
  const api = createAccountApi((refresh) => session.token(refresh));

  // The overview's first GET /v1/account starts now; the page takes it over when it mounts.
  let early: Promise<Account> | undefined = session.hasFreshToken && routeOf(location.hash) === 'overview' ? api.account() : undefined;
  early?.catch(() => undefined);
  const account = api.account;
  api.account = () => {
    const first = early;
    early = undefined;
    return first ?? account();
  };

  let config: SiteConfig;
  try {
    config = await configReady;
  } catch (error) {
    render(
      <main id="main" class="auth">
        <div class="notice notice-error" role="alert">
          <p>The dashboard could not start: {errorMessage(error)}</p>
        </div>
      </main>,
      root,
    );
    return;
  }
  root.textContent = '';
  render(
    <ServicesContext.Provider value={{ config, cognito: await lazyCognito(), session, api }}>
      <App />
    </ServicesContext.Provider>,
    root,
  );
}

const root = document.getElementById('app');
if (root) void boot(root);
