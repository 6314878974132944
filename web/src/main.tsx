import { render } from 'preact';
import { createAccountApi, loadSiteConfig } from './api/account-api';
import { errorMessage } from './api/api-error';
import { createCognitoClient } from './auth/cognito';
import { Session } from './auth/session';
import { App } from './app';
import { ServicesContext } from './context';

/**
 * Boot: read /config.json (where the user pool is), build the Cognito client, the session (resumed
 * from this tab's sessionStorage if the user was signed in) and the account API client, then render.
 */
async function boot(root: HTMLElement): Promise<void> {
  let config;
  try {
    config = await loadSiteConfig();
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
  const cognito = createCognitoClient(config);
  const session = new Session(cognito, sessionStorage);
  const api = createAccountApi((refresh) => session.token(refresh));
  root.textContent = '';
  render(
    <ServicesContext.Provider value={{ config, cognito, session, api }}>
      <App />
    </ServicesContext.Provider>,
    root,
  );
}

const root = document.getElementById('app');
if (root) void boot(root);
