/**
 * An error the page can show as it is: `message` is written for a person (the API's own message, or
 * Cognito's, or ours for a network failure). `status` 0 means the request never got an answer.
 */
export class ApiError extends Error {
  constructor(
    message: string,
    /** HTTP status, or 0 when there was no answer (offline, DNS, CORS, aborted). */
    readonly status: number,
    /** OpenAI's `error.code` (e.g. `key_limit_exceeded`) or Cognito's `__type` (e.g. `NotAuthorizedException`). */
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The message shown when a request got no answer at all. */
export const NETWORK_ERROR_MESSAGE = 'Could not reach the server. Check your connection and try again.';

/** Turns anything thrown into words for the page. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error && error.message) return error.message;
  return 'Something went wrong. Please try again.';
}
