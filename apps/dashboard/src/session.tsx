import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { createApiClient, type ApiClient } from './api.js';
import type { SessionUser } from './types.js';

/** Where the console once kept the JWT itself; any copy left behind by an older console is removed. */
const LEGACY_STORAGE_KEY = 'agentgw.session';

const EXPIRED = 'Your session has expired; sign in again.';

/** Whether someone is signed in; `restoring` while the gateway is asked whether the cookie still signs someone in. */
type SessionState =
  | { status: 'restoring' }
  | { status: 'signed-out'; endedBecause: string | null }
  | { status: 'signed-in'; user: SessionUser };

/** What every page gets from the console's session. */
export interface Session {
  user: SessionUser | null;
  /** True until the gateway has said whether the session cookie still signs someone in (after a reload). */
  restoring: boolean;
  api: ApiClient;
  signIn(email: string, password: string): Promise<SessionUser>;
  signOut(): Promise<void>;
  /** Why the last session ended on its own (expired token), shown on the sign-in page. */
  endedBecause: string | null;
}

const SessionContext = createContext<Session | null>(null);

/**
 * The signed-in user. The JWT itself lives in the gateway's httpOnly cookie, out of reach of
 * any script in the page; a reload asks `GET /auth/session` who the cookie signs in.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: 'restoring' });
  const signedIn = useRef(false);

  const end = useCallback((endedBecause: string | null) => {
    signedIn.current = false;
    setState({ status: 'signed-out', endedBecause });
  }, []);

  const api = useMemo(
    () => createApiClient({ signedIn: () => signedIn.current, onUnauthorized: () => end(EXPIRED) }),
    [end],
  );

  const start = useCallback((user: SessionUser) => {
    signedIn.current = true;
    setState({ status: 'signed-in', user });
  }, []);

  useEffect(() => {
    window.localStorage.removeItem(LEGACY_STORAGE_KEY);
    let current = true;
    api.get<{ user: SessionUser }>('/auth/session').then(
      ({ user }) => current && start(user),
      () => current && end(null),
    );
    return () => {
      current = false;
    };
  }, [api, start, end]);

  const signIn = useCallback(
    async (email: string, password: string) => {
      const { user } = await api.post<{ user: SessionUser }>('/auth/login', { email, password, session: 'cookie' });
      start(user);
      return user;
    },
    [api, start],
  );

  // The cookie is httpOnly: only the gateway can expire it.
  const signOut = useCallback(async () => {
    const cleared = await api.post('/auth/logout').then(
      () => true,
      () => false,
    );
    end(
      cleared
        ? null
        : 'Signed out here, but the gateway could not be reached to end the session; sign in and out again to end it.',
    );
  }, [api, end]);

  const value = useMemo<Session>(
    () => ({
      user: state.status === 'signed-in' ? state.user : null,
      restoring: state.status === 'restoring',
      api,
      signIn,
      signOut,
      endedBecause: state.status === 'signed-out' ? state.endedBecause : null,
    }),
    [state, api, signIn, signOut],
  );
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
