import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/keys`). The hash never reaches a server, so the site stays plain static files
 * behind CloudFront with no rewrite rules (which would also touch the API's 404s on the same
 * distribution). Only page names ever go in the URL: never a key, token or code.
 */
export type Route = 'overview' | 'credits' | 'keys' | 'usage' | 'byok' | 'sign-in' | 'sign-up' | 'confirm' | 'forgot-password';

/** Pages that need a signed-in user. */
export const APP_ROUTES: readonly Route[] = ['overview', 'credits', 'keys', 'usage', 'byok'];
/** Pages for signed-out visitors. */
export const AUTH_ROUTES: readonly Route[] = ['sign-in', 'sign-up', 'confirm', 'forgot-password'];

const PATHS: Record<Route, string> = {
  overview: '#/',
  credits: '#/credits',
  keys: '#/keys',
  usage: '#/usage',
  byok: '#/byok',
  'sign-in': '#/sign-in',
  'sign-up': '#/sign-up',
  confirm: '#/confirm',
  'forgot-password': '#/forgot-password',
};

/** The href of a route. */
export function href(route: Route): string {
  return PATHS[route];
}

/** The route of a location hash; unknown hashes are the overview. */
export function routeOf(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  for (const [route, target] of Object.entries(PATHS) as Array<[Route, string]>) {
    if (target.slice(1) === path) return route;
  }
  return 'overview';
}

/** Goes to a route (adds a history entry, so Back works). */
export function navigate(route: Route, replace = false): void {
  const target = PATHS[route];
  if (location.hash === target) return;
  if (replace) {
    history.replaceState(null, '', target);
    dispatchEvent(new HashChangeEvent('hashchange'));
  } else {
    location.hash = target;
  }
}

/** The current route, re-rendering on every hash change. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const onChange = (): void => setRoute(routeOf(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
