import { useCallback, useEffect, useState } from 'react';
import { useSession } from './session.js';

export interface Resource<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/** GETs an API path (null: nothing to load yet), with loading and error state, reloaded on demand. */
export function useResource<T>(path: string | null): Resource<T> {
  const { api } = useSession();
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean }>({
    data: null,
    error: null,
    loading: path !== null,
  });
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    api.get<T>(path, { signal: controller.signal }).then(
      (data) => setState({ data, error: null, loading: false }),
      (error: unknown) => {
        if (!controller.signal.aborted) setState({ data: null, error, loading: false });
      },
    );
    return () => controller.abort();
  }, [api, path, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

/** Runs one user action (a button or form), tracking it as busy and keeping its error for display. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run<T>(work: () => Promise<T>): Promise<T | undefined>;
  clear(): void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async <T>(work: () => Promise<T>) => {
    setBusy(true);
    setError(null);
    try {
      return await work();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  const clear = useCallback(() => setError(null), []);
  return { busy, error, run, clear };
}
