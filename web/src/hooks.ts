import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from './api/api-error';
import { pending } from './auth/pending';
import { useServices } from './context';

/** The session is over (token refused and not refreshable): say so on the sign-in page, and sign out. */
function endSession(session: { signOut(): Promise<void>; email: string | undefined }, error: ApiError): void {
  pending.flash ??= error.message;
  pending.email ||= session.email ?? '';
  void session.signOut();
}

/** A value being loaded: its state, the value or the error in words, and a way to load it again. */
export type Resource<T> =
  | { state: 'loading'; data: T | undefined; error: undefined; reload: () => void }
  | { state: 'ready'; data: T; error: undefined; reload: () => void }
  | { state: 'error'; data: T | undefined; error: string; reload: () => void };

/**
 * Loads `load()` on mount and on `reload()`. A 401 (the session is over) signs the user out, which
 * takes them to the sign-in page. A reload keeps showing the previous data while it runs.
 */
export function useResource<T>(load: () => Promise<T>): Resource<T> {
  const { session } = useServices();
  const [tick, setTick] = useState(0);
  const [state, setState] = useState<{ state: 'loading' | 'ready' | 'error'; data: T | undefined; error: string | undefined }>({
    state: 'loading',
    data: undefined,
    error: undefined,
  });
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let live = true;
    setState((s) => ({ state: 'loading', data: s.data, error: undefined }));
    loadRef.current().then(
      (data) => live && setState({ state: 'ready', data, error: undefined }),
      (error: unknown) => {
        if (!live) return;
        if (error instanceof ApiError && error.status === 401) endSession(session, error);
        setState((s) => ({ state: 'error', data: s.data, error: errorMessage(error) }));
      },
    );
    return () => {
      live = false;
    };
  }, [tick, session]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload } as Resource<T>;
}

/**
 * Runs one user action at a time (a form submit, a button): `busy` while it runs, `error` in words
 * when it failed (a 401 signs out). `run` resolves to the action's value, or undefined on failure.
 */
export function useAction(): {
  busy: boolean;
  error: string | undefined;
  setError: (message: string | undefined) => void;
  run: <T>(action: () => Promise<T>) => Promise<T | undefined>;
} {
  const { session } = useServices();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const running = useRef(false);
  const run = useCallback(
    async <T>(action: () => Promise<T>): Promise<T | undefined> => {
      if (running.current) return undefined;
      running.current = true;
      setBusy(true);
      setError(undefined);
      try {
        return await action();
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) endSession(session, e);
        setError(errorMessage(e));
        return undefined;
      } finally {
        running.current = false;
        setBusy(false);
      }
    },
    [session],
  );
  return { busy, error, setError, run };
}

/** Sets the document title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · modelmux`;
  }, [title]);
}
