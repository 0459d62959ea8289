import { useEffect, useRef } from 'react';
import { ErrorNotice, Loading } from '../components/feedback.js';
import { isResumeUrl } from '../oauth-consent.js';
import { useLocation } from '../router.js';
import { useSession } from '../session.js';
import { useAction, useResource } from '../use-resource.js';

/** A pending MCP client sign-in as the gateway describes it (GET /oauth/interactions/:uid). */
interface InteractionView {
  uid: string;
  client: { id: string; name: string | null; uri: string | null };
  redirect: { kind: 'origin'; origin: string } | { kind: 'this_computer' };
  resource: string;
  scopes: string[];
  remembered: boolean;
}

/**
 * An external issuer the sign-in may continue at (GET /oauth/interactions/:uid/logins): a local
 * copy of the generated ExternalLoginOption with only the two fields this page reads.
 */
interface ExternalLoginOption {
  id: string;
  name: string;
}

/**
 * What the gateway's `?login_error=` word (an external sign-in that came back refused) means to
 * the person. Only these words are shown: anything else in the address is ignored, so a link
 * cannot put its own text on this page.
 */
const LOGIN_ERRORS: Partial<Record<string, string>> = {
  cancelled:
    'The sign-in at the identity provider was cancelled or denied there. Try again, or sign in with your gateway account.',
  refused:
    "The identity provider's answer could not be verified, so you were not signed in. Try again; if it keeps failing, tell your administrator.",
  not_registered:
    'You signed in at the identity provider, but no gateway account is linked to that identity. Ask an administrator to create or link your account, or sign in with a gateway account.',
  unavailable: 'The identity provider could not be reached. Try again later, or sign in with your gateway account.',
};

/** The message for the address's `login_error`, when it is one of the gateway's words. */
function loginErrorOf(search: URLSearchParams): string | undefined {
  const code = search.get('login_error');
  return code !== null && Object.hasOwn(LOGIN_ERRORS, code) ? LOGIN_ERRORS[code] : undefined;
}

/**
 * "Continue with <name>" for each external issuer configured for sign-in, under the gateway's own
 * sign-in form on /connect/:uid: a full navigation to the gateway, which sends the browser on to
 * the identity provider and back here signed in, or back with `?login_error=` (shown here).
 */
export function ExternalLoginButtons({ uid }: { uid: string }) {
  const failure = loginErrorOf(useLocation().search);
  const options = useResource<{ logins: ExternalLoginOption[] }>(
    `/oauth/interactions/${encodeURIComponent(uid)}/logins`,
  );
  const logins = options.data?.logins ?? [];
  if (logins.length === 0 && !failure) return null;
  return (
    <section aria-labelledby="external-logins-title">
      <h2 id="external-logins-title">Or continue with</h2>
      {failure ? (
        <div className="notice notice-error" role="alert">
          <strong>You were not signed in: </strong>
          {failure}
        </div>
      ) : null}
      <div className="form-actions">
        {logins.map((login) => (
          <button
            key={login.id}
            type="button"
            className="secondary"
            onClick={() =>
              window.location.assign(
                `/api/v1/oauth/interactions/${encodeURIComponent(uid)}/external/${encodeURIComponent(login.id)}`,
              )
            }
          >
            Continue with {login.name}
          </button>
        ))}
      </div>
    </section>
  );
}

/** What each scope lets the client do, in words. */
const SCOPE_WORDS: Record<string, string> = {
  mcp: 'Use the tools of this endpoint as you: every call goes through your access rules, confirmations and the audit log',
  offline_access: 'Stay connected when you are away (a refresh token) until you revoke it',
  openid: 'Know who you are (your user id)',
};

/** Where the code goes once allowed, in words: a web origin, or a program on this computer. */
function redirectWords(redirect: InteractionView['redirect']): string {
  return redirect.kind === 'origin' ? redirect.origin : 'A program on this computer';
}

/**
 * The consent screen of the MCP authorization flow (/connect/:uid; the sign-in page comes first
 * when nobody is signed in): names the client, where the code goes, the endpoint and the scopes,
 * and sends the answer. A consent given before for the same client, endpoint and scopes goes on by
 * itself, and only here: the gateway shows a sign-in only to the browser that started it (any other
 * gets 403 STARTED_ELSEWHERE, so no view and nothing to approve).
 */
export function ConnectPage({ uid }: { uid: string }) {
  const { api, user } = useSession();
  const view = useResource<InteractionView>(`/oauth/interactions/${encodeURIComponent(uid)}`);
  const answer = useAction();
  const answered = useRef(false);

  const decide = (decision: 'approve' | 'deny') => {
    if (answered.current) return;
    answered.current = true;
    void answer
      .run(async () => {
        const { redirectTo } = await api.post<{ redirectTo: string }>(
          `/oauth/interactions/${encodeURIComponent(uid)}`,
          { decision },
        );
        if (!isResumeUrl(redirectTo, window.location.origin))
          throw new Error('The gateway answered an unexpected address; not following it');
        window.location.assign(redirectTo);
      })
      .finally(() => (answered.current = false));
  };

  useEffect(() => {
    // A remembered consent answers itself once (decide only reads the uid and the session's api).
    if (view.data?.remembered) decide('approve');
    // Runs when the view arrives, not on every render's new `decide` (the ref guards a second answer).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [view.data?.remembered]);

  const data = view.data;
  const clientName = data ? (data.client.name ?? data.client.id) : '';
  return (
    <main id="main" className="sign-in">
      <h1>Connect an MCP client</h1>
      <div className="card">
        {view.loading && !data ? <Loading what="the sign-in request" /> : null}
        <ErrorNotice error={view.error} title="This sign-in request cannot be shown" />
        {data ? (
          <section aria-labelledby="consent-title">
            <h2 id="consent-title">{clientName} wants to use the gateway as you</h2>
            <p>
              Signed in as <strong>{user?.email}</strong>.
            </p>
            <dl className="consent-facts">
              <dt>Client</dt>
              <dd>
                {clientName}
                {data.client.name ? <span className="hint mono"> ({data.client.id})</span> : null}
                {data.client.uri ? <span className="hint"> · {data.client.uri}</span> : null}
              </dd>
              <dt>Sends you back to</dt>
              <dd className={data.redirect.kind === 'origin' ? 'mono' : undefined}>{redirectWords(data.redirect)}</dd>
              <dt>Endpoint</dt>
              <dd className="mono">{data.resource}</dd>
              <dt>Permissions</dt>
              <dd>
                <ul>
                  {data.scopes.map((scope) => (
                    <li key={scope}>
                      <span className="mono">{scope}</span>:{' '}
                      {SCOPE_WORDS[scope] ?? 'A permission this gateway does not describe'}
                    </li>
                  ))}
                </ul>
              </dd>
            </dl>
            {data.remembered ? (
              <p className="notice" role="status">
                You allowed this client before; continuing…
              </p>
            ) : null}
            <ErrorNotice error={answer.error} title="Your answer was not recorded" />
            <div className="form-actions">
              <button type="button" disabled={answer.busy} onClick={() => decide('approve')}>
                Allow
              </button>
              <button type="button" className="secondary" disabled={answer.busy} onClick={() => decide('deny')}>
                Deny
              </button>
            </div>
            <p className="hint">You can revoke this client at any time under Connected clients.</p>
          </section>
        ) : null}
      </div>
    </main>
  );
}
