import { ApiError } from '../api/api-error';
import type { CognitoClient, CognitoTokens } from './cognito';

/**
 * Who is signed in, and the token the account API gets.
 *
 * The tokens (access, id, refresh) and the email are kept in sessionStorage: a reload in the same tab
 * stays signed in without a round trip to Cognito, and closing the tab ends the session. localStorage
 * is never used (it outlives the tab and is shared by every tab), nor cookies. Nothing here ever goes
 * into a URL or a log. With the strict CSP (no inline or third-party script), sessionStorage is
 * reachable only by the page's own bundle.
 *
 * Tokens are refreshed (REFRESH_TOKEN_AUTH) before they expire, within {@link REFRESH_MARGIN_MS}, and
 * on demand when the API refused one; concurrent callers share one refresh. A refused refresh token
 * (expired, revoked) signs the user out.
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
  accessToken?: string;
  idToken?: string;
  /** Epoch ms the access and id tokens expire. */
  expiresAt?: number;
}

/** Signed-in state and token source. `cognito` is asked for lazily (it needs /config.json). */
export class Session {
  private stored: Stored | undefined;
  /** The email of the session that ended last, so the sign-in page can offer it again. */
  private lastEmail: string | undefined;
  private refreshing: Promise<void> | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly cognito: () => Promise<CognitoClient>,
    private readonly storage: KeyValueStorage | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.stored = readStored(storage);
  }

  /** True while a refresh token is held (the user has not signed out). */
  get signedIn(): boolean {
    return this.stored !== undefined;
  }

  /** The signed-in user's email (after a sign-out: the last one), for display. */
  get email(): string | undefined {
    return this.stored?.email ?? this.lastEmail;
  }

  /** True when an API call can go out now, without refreshing first. */
  get hasFreshToken(): boolean {
    return this.stored?.accessToken !== undefined && (this.stored.expiresAt ?? 0) - this.now() >= REFRESH_MARGIN_MS;
  }

  /** Calls `listener` whenever the user signs in or out. Returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Signs in with email and password. Throws ApiError with Cognito's message. */
  async signIn(email: string, password: string): Promise<void> {
    const tokens = await (await this.cognito()).signIn(email, password);
    if (tokens.refreshToken === undefined) throw new ApiError('Sign-in answered without a refresh token.', 502);
    this.save({ email, refreshToken: tokens.refreshToken, ...this.fresh(tokens) });
    this.emit();
  }

  /**
   * The bearer token for the account API: refreshed first when it is within the margin of expiring,
   * or when `forceRefresh` (the API refused it). Throws ApiError 401 when the session is over
   * (signed out, or the refresh token was refused: the user is then signed out).
   */
  async token(forceRefresh = false): Promise<string> {
    if (this.stored === undefined) throw new ApiError('You are signed out. Please sign in again.', 401);
    if (forceRefresh || !this.hasFreshToken) await this.refresh();
    const token = API_TOKEN_KIND === 'access' ? this.stored?.accessToken : this.stored?.idToken;
    if (token === undefined) throw new ApiError('You are signed out. Please sign in again.', 401);
    return token;
  }

  /** Signs out here at once, and revokes the refresh token at Cognito (best effort). */
  async signOut(): Promise<void> {
    const refreshToken = this.stored?.refreshToken;
    this.clear();
    if (refreshToken !== undefined) await (await this.cognito()).revoke(refreshToken).catch(() => undefined);
  }

  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const stored = this.stored;
      if (stored === undefined) return;
      try {
        const tokens = await (await this.cognito()).refresh(stored.refreshToken);
        if (this.stored === stored) this.save({ ...stored, ...this.fresh(tokens) });
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

  private fresh(tokens: CognitoTokens): Pick<Stored, 'accessToken' | 'idToken' | 'expiresAt'> {
    return { accessToken: tokens.accessToken, idToken: tokens.idToken, expiresAt: this.now() + tokens.expiresIn * 1000 };
  }

  private save(stored: Stored): void {
    this.stored = stored;
    try {
      this.storage?.setItem(STORAGE_KEY, JSON.stringify(stored));
    } catch {
      /* storage full or refused: the session lives in memory for this page */
    }
  }

  private clear(): void {
    const was = this.stored !== undefined;
    this.lastEmail = this.stored?.email ?? this.lastEmail;
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
    const v = JSON.parse(raw) as Partial<Stored>;
    if (typeof v.email !== 'string' || typeof v.refreshToken !== 'string') return undefined;
    const tokens =
      typeof v.accessToken === 'string' && typeof v.idToken === 'string' && typeof v.expiresAt === 'number'
        ? { accessToken: v.accessToken, idToken: v.idToken, expiresAt: v.expiresAt }
        : {};
    return { email: v.email, refreshToken: v.refreshToken, ...tokens };
  } catch {
    return undefined;
  }
}
