import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import {
  openConfirmationStream,
  toConfirmation,
  type PendingConfirmation,
  type StreamStatus,
} from './confirmation-stream.js';
import { useSession } from './session.js';

export interface LiveConfirmations {
  pending: PendingConfirmation[];
  status: StreamStatus;
  /** Last failure of the pending-list resync, if any. */
  syncError: unknown;
  /** Drops a confirmation after this console answered it (the RESOLVED event may follow). */
  forget(id: string): void;
  notificationsAllowed: NotificationPermission | 'unsupported';
  /** Asks for the browser's notification permission; call it from a click. */
  askNotifications(): Promise<void>;
}

const Context = createContext<LiveConfirmations | null>(null);

const notificationSupport = (): NotificationPermission | 'unsupported' =>
  typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;

/**
 * One live stream per signed-in console: held tool calls arrive on every page (the menu shows
 * the count) and raise a browser notification when the user allowed them.
 */
export function ConfirmationsProvider({ children }: { children: ReactNode }) {
  const { api } = useSession();
  const [pending, setPending] = useState<PendingConfirmation[]>([]);
  const [status, setStatus] = useState<StreamStatus>({ state: 'connecting' });
  const [syncError, setSyncError] = useState<unknown>(null);
  const [notificationsAllowed, setAllowed] = useState(notificationSupport);
  const allowedRef = useRef(notificationsAllowed);
  allowedRef.current = notificationsAllowed;

  useEffect(() => {
    const resync = () => {
      api.get<{ data?: unknown[] }>('/stream/pending').then(
        (answer) => {
          const list = (answer.data ?? []).map(toConfirmation).filter((c): c is PendingConfirmation => c !== null);
          setPending(list);
          setSyncError(null);
        },
        (err: unknown) => setSyncError(err),
      );
    };
    return openConfirmationStream(api, {
      onStatus: setStatus,
      onConnected: resync,
      onRequired: (c) => {
        setPending((list) => [c, ...list.filter((x) => x.id !== c.id)]);
        if (allowedRef.current === 'granted') {
          const n = new Notification(`Confirm ${c.toolName}?`, {
            body: `Risk ${c.risk}. Open the console to approve or reject.`,
            tag: c.id,
          });
          n.onclick = () => {
            window.focus();
            window.location.assign('/confirmations');
          };
        }
      },
      onResolved: (id) => setPending((list) => list.filter((x) => x.id !== id)),
    });
  }, [api]);

  const forget = useCallback((id: string) => setPending((list) => list.filter((x) => x.id !== id)), []);
  const askNotifications = useCallback(async () => {
    if (typeof Notification === 'undefined') return;
    setAllowed(await Notification.requestPermission());
  }, []);

  const value = useMemo(
    () => ({ pending, status, syncError, forget, notificationsAllowed, askNotifications }),
    [pending, status, syncError, forget, notificationsAllowed, askNotifications],
  );
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

/** The live confirmations; only inside ConfirmationsProvider. */
export function useLiveConfirmations(): LiveConfirmations {
  const value = useContext(Context);
  if (!value) throw new Error('useLiveConfirmations outside ConfirmationsProvider');
  return value;
}
