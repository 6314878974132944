import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AccountApi } from './api/account-api';
import type { SiteConfig } from './api/types';
import type { CognitoClient } from './auth/cognito';
import type { Session } from './auth/session';

/** What every page may use: the site config, Cognito, the session and the account API client. */
export interface Services {
  config: SiteConfig;
  cognito: CognitoClient;
  session: Session;
  api: AccountApi;
}

export const ServicesContext = createContext<Services | undefined>(undefined);

/** The services; throws when rendered outside the app (a programming error). */
export function useServices(): Services {
  const services = useContext(ServicesContext);
  if (services === undefined) throw new Error('useServices outside <ServicesContext.Provider>');
  return services;
}
