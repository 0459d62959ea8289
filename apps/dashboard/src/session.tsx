import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';
import { createApiClient, type ApiClient } from './api.js';
import type { SessionUser } from './types.js';

const STORAGE_KEY = 'agentgw.session';

interface StoredSession {
  token: string;
  user: SessionUser;
}

export interface Session {
  user: SessionUser | null;
  api: ApiClient;
  signIn(email: string, password: string): Promise<SessionUser>;
  signOut(reason?: string): void;
  /** Why the last session ended on its own (expired token), shown on the sign-in page. */
  endedBecause: string | null;
}

function readStored(): StoredSession | null {
  try {
    const raw = window.localStorage.getItem(STORAGE_KEY);
    const parsed = raw ? (JSON.parse(raw) as StoredSession) : null;
    return parsed && typeof parsed.token === 'string' && parsed.user && Array.isArray(parsed.user.roles) ? parsed : null;
  } catch {
    return null;
  }
}

const SessionContext = createContext<Session | null>(null);

/** The signed-in user and their JWT (kept in localStorage so a reload stays signed in). */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<StoredSession | null>(readStored);
  const [endedBecause, setEndedBecause] = useState<string | null>(null);
  const tokenRef = useRef<string | null>(session?.token ?? null);

  const signOut = useCallback((reason?: string) => {
    window.localStorage.removeItem(STORAGE_KEY);
    tokenRef.current = null;
    setSession(null);
    setEndedBecause(reason ?? null);
  }, []);

  const api = useMemo(
    () => createApiClient({ token: () => tokenRef.current, onUnauthorized: () => signOut('Your session has expired; sign in again.') }),
    [signOut],
  );

  const signIn = useCallback(
    async (email: string, password: string) => {
      const answer = await api.post<{ token: string; user: SessionUser }>('/auth/login', { email, password });
      const stored = { token: answer.token, user: answer.user };
      window.localStorage.setItem(STORAGE_KEY, JSON.stringify(stored));
      tokenRef.current = stored.token;
      setEndedBecause(null);
      setSession(stored);
      return stored.user;
    },
    [api],
  );

  const value = useMemo<Session>(() => ({ user: session?.user ?? null, api, signIn, signOut, endedBecause }), [session, api, signIn, signOut, endedBecause]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

/** The session of the console; only inside SessionProvider. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The signed-in user, for pages that only render when someone is signed in. */
export function useUser(): SessionUser {
  const { user } = useSession();
  if (!user) throw new Error('useUser without a signed-in user');
  return user;
}
