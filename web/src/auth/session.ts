import { ApiError } from '../api/api-error';
import type { CognitoClient, CognitoTokens } from './cognito';

/**
 * Who is signed in, and the token the account API gets.
 *
 * The access and id tokens live in memory only. The refresh token (and the email, for display) is
 * kept in sessionStorage, so a reload in the same tab stays signed in and closing the tab ends it;
 * localStorage is never used (it outlives the tab and is shared by every tab). Nothing here ever
 * goes into a URL or a log. With the strict CSP (no inline or third-party script) sessionStorage is
 * reachable only by the page's own bundle.
 *
 * Tokens are refreshed before they expire (within {@link REFRESH_MARGIN_MS}) and on demand when the
 * API refused one; concurrent callers share one refresh.
 */

/** Refresh this long before the access token expires, ms. */
export const REFRESH_MARGIN_MS = 60_000;

const STORAGE_KEY = 'modelmux.session';

/** The part of the Web Storage API used (sessionStorage in the page). */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The token the account API gets: Cognito's access token (DATA-MODEL §7 accepts access or id). */
export type ApiTokenKind = 'access' | 'id';
export const API_TOKEN_KIND: ApiTokenKind = 'access';

interface Stored {
  email: string;
  refreshToken: string;
}

/** Signed-in state and token source. */
export class Session {
  private tokens: (CognitoTokens & { expiresAt: number }) | undefined;
  private stored: Stored | undefined;
  private refreshing: Promise<void> | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly cognito: CognitoClient,
    private readonly storage: KeyValueStorage | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.stored = readStored(storage);
  }

  /** True while a refresh token is held (the user has not signed out). */
  get signedIn(): boolean {
    return this.stored !== undefined;
  }

  /** The signed-in user's email, for display. */
  get email(): string | undefined {
    return this.stored?.email;
  }

  /** Calls `listener` whenever the user signs in or out. Returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Signs in with email and password. Throws ApiError with Cognito's message. */
  async signIn(email: string, password: string): Promise<void> {
    const tokens = await this.cognito.signIn(email, password);
    if (tokens.refreshToken === undefined) throw new ApiError('Sign-in answered without a refresh token.', 502);
    this.accept(tokens);
    this.stored = { email, refreshToken: tokens.refreshToken };
    this.storage?.setItem(STORAGE_KEY, JSON.stringify(this.stored));
    this.emit();
  }

  /**
   * The bearer token for the account API: fresh when the current one is within the margin of
   * expiring, or when `forceRefresh` (the API refused it). Throws ApiError 401 when the session is
   * over (signed out, or the refresh token was refused: the user is then signed out).
   */
  async token(forceRefresh = false): Promise<string> {
    if (this.stored === undefined) throw new ApiError('You are signed out. Please sign in again.', 401);
    if (forceRefresh || this.tokens === undefined || this.tokens.expiresAt - this.now() < REFRESH_MARGIN_MS) await this.refresh();
    const tokens = this.tokens;
    if (tokens === undefined) throw new ApiError('You are signed out. Please sign in again.', 401);
    return API_TOKEN_KIND === 'access' ? tokens.accessToken : tokens.idToken;
  }

  /** Signs out here at once, and revokes the refresh token at Cognito (best effort). */
  async signOut(): Promise<void> {
    const refreshToken = this.stored?.refreshToken;
    this.clear();
    if (refreshToken !== undefined) await this.cognito.revoke(refreshToken).catch(() => undefined);
  }

  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const stored = this.stored;
      if (stored === undefined) return;
      try {
        this.accept(await this.cognito.refresh(stored.refreshToken));
      } catch (error) {
        // A refused refresh token (expired, revoked) ends the session; a network error does not.
        if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
          this.clear();
          throw new ApiError('Your session has ended. Please sign in again.', 401, error.code);
        }
        throw error;
      }
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private accept(tokens: CognitoTokens): void {
    this.tokens = { ...tokens, expiresAt: this.now() + tokens.expiresIn * 1000 };
  }

  private clear(): void {
    const was = this.stored !== undefined;
    this.tokens = undefined;
    this.stored = undefined;
    this.storage?.removeItem(STORAGE_KEY);
    if (was) this.emit();
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }
}

function readStored(storage: KeyValueStorage | undefined): Stored | undefined {
  try {
    const raw = storage?.getItem(STORAGE_KEY);
    if (!raw) return undefined;
    const value = JSON.parse(raw) as Partial<Stored>;
    return typeof value.email === 'string' && typeof value.refreshToken === 'string' ? { email: value.email, refreshToken: value.refreshToken } : undefined;
  } catch {
    return undefined;
  }
}
