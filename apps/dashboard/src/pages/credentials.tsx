import { useState, type FormEvent } from 'react';
import { ApiError } from '../api.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { Empty, ErrorNotice, Loading, Success } from '../components/feedback.js';
import { DataTable } from '../components/data-table.js';
import { SelectField, TextAreaField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import type { CredentialProvider, StoredCredential } from '../types.js';
import { useAction, useResource } from '../use-resource.js';

const SERVICE_TYPE = /^[a-z][a-z0-9_]*$/;

/** My credentials, and the connect page the vault links to: `/credentials?serviceType=…`. */
export function CredentialsPage() {
  const { api, user } = useSession();
  const { search } = useLocation();
  const wanted = search.get('serviceType');
  const serviceType = wanted && SERVICE_TYPE.test(wanted) ? wanted : null;
  const credentials = useResource<{ credentials: StoredCredential[] }>('/credentials');
  const remove = useAction();
  const reconnect = useAction();
  const justConnected = search.get('connected');

  return (
    <Layout title={serviceType ? `Connect ${serviceType}` : 'My credentials'}>
      {wanted && !serviceType ? (
        <p className="notice notice-error" role="alert">
          "{wanted}" is not a valid service type.
        </p>
      ) : null}
      {justConnected && SERVICE_TYPE.test(justConnected) ? (
        <Success>Connected {justConnected}. Agents that need it can now use it.</Success>
      ) : null}
      {serviceType ? (
        <ConnectPanel
          serviceType={serviceType}
          existing={credentials.data?.credentials.find((c) => c.serviceType === serviceType) ?? null}
          onStored={credentials.reload}
        />
      ) : (
        <ChooseService />
      )}
      <section aria-labelledby="my-credentials">
        <h2 id="my-credentials">Stored credentials</h2>
        <p className="hint">Encrypted in the vault; the secrets themselves are never shown again.</p>
        <ErrorNotice error={remove.error} />
        <ErrorNotice error={reconnect.error} title="Could not start the connection" />
        {credentials.loading && !credentials.data ? <Loading what="your credentials" /> : null}
        <ErrorNotice error={credentials.error} title="Could not load your credentials" />
        {credentials.data?.credentials.length === 0 ? <Empty>You have not connected any service yet.</Empty> : null}
        {credentials.data && credentials.data.credentials.length > 0 ? (
          <DataTable
            caption="Stored credentials"
            columns={['Service', 'Kind', 'Status', 'Expires', 'Updated', 'Actions']}
          >
            {credentials.data.credentials.map((c) => (
              <tr key={c.id}>
                <CredentialCells credential={c} />
                <td data-label="Updated">{new Date(c.updatedAt).toLocaleString()}</td>
                <td data-label="Actions" className="actions">
                  {c.kind === 'oauth2' ? (
                    <button
                      type="button"
                      className={c.status === 'connected' ? 'secondary' : undefined}
                      disabled={reconnect.busy}
                      onClick={() => void reconnect.run(() => startOAuthConnection(api, c.serviceType))}
                    >
                      Reconnect<span className="sr-only"> {c.serviceType}</span>
                    </button>
                  ) : (
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => navigate(`/credentials?serviceType=${c.serviceType}`)}
                    >
                      Replace<span className="sr-only"> {c.serviceType}</span>
                    </button>
                  )}
                  <ConfirmButton
                    label={c.kind === 'oauth2' ? 'Disconnect' : 'Delete'}
                    confirmLabel={`${c.kind === 'oauth2' ? 'Disconnect' : 'Delete'} ${c.serviceType}`}
                    disabled={remove.busy}
                    onConfirm={() => void remove.run(() => api.del(`/credentials/${c.id}`)).then(credentials.reload)}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
        ) : null}
      </section>
      {user?.roles.includes('admin') ? <UserConnections /> : null}
    </Layout>
  );
}

/** The cells both credential tables start with: service, kind, status and expiry. */
function CredentialCells({ credential: c }: { credential: StoredCredential }) {
  return (
    <>
      <td data-label="Service" className="mono">
        {c.serviceType}
      </td>
      <td data-label="Kind">{c.kind === 'oauth2' ? 'OAuth' : c.kind}</td>
      <td data-label="Status">
        <CredentialStatusBadge status={c.status} />
      </td>
      <td data-label="Expires">{expiryText(c)}</td>
    </>
  );
}

/** Admins: which services a user has connected, and their status; the vault never hands out the tokens. */
function UserConnections() {
  const users = useResource<{ users: { id: string; email: string }[] }>('/admin/users');
  const [userId, setUserId] = useState('');
  const connections = useResource<{ credentials: StoredCredential[] }>(
    userId ? `/credentials/users/${encodeURIComponent(userId)}` : null,
  );
  return (
    <section aria-labelledby="user-connections">
      <h2 id="user-connections">A user's connected services</h2>
      <ErrorNotice error={users.error} title="Could not load the users" />
      <SelectField
        label="User"
        value={userId}
        onChange={(e) => setUserId(e.target.value)}
        options={[
          { value: '', label: 'Choose a user' },
          ...(users.data?.users ?? []).map((u) => ({ value: u.id, label: u.email })),
        ]}
      />
      {connections.loading ? <Loading what="the user's connections" /> : null}
      <ErrorNotice error={connections.error} title="Could not load the user's connections" />
      {connections.data?.credentials.length === 0 ? <Empty>This user has not connected any service.</Empty> : null}
      {connections.data && connections.data.credentials.length > 0 ? (
        <DataTable caption="The user's connected services" columns={['Service', 'Kind', 'Status', 'Expires']}>
          {connections.data.credentials.map((c) => (
            <tr key={c.id}>
              <CredentialCells credential={c} />
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}

const STATUS_TEXT: Record<StoredCredential['status'], { text: string; tone: 'ok' | 'off' }> = {
  connected: { text: 'Connected', tone: 'ok' },
  expired: { text: 'Expired', tone: 'off' },
  needs_reconnect: { text: 'Reconnect needed', tone: 'off' },
};

/** The credential's status in words (the colour only repeats it). */
function CredentialStatusBadge({ status }: { status: StoredCredential['status'] }) {
  const { text, tone } = STATUS_TEXT[status];
  return <span className={`status ${tone}`}>{text}</span>;
}

/** An OAuth token is renewed by the vault before it expires: its expiry is the current token's. */
function expiryText(c: StoredCredential): string {
  if (!c.expiresAt) return 'never';
  const when = new Date(c.expiresAt).toLocaleString();
  return c.kind === 'oauth2' && c.status === 'connected' ? `${when} (renewed automatically)` : when;
}

/** Asks the vault to start an OAuth connection and sends the browser to the authorization server. */
async function startOAuthConnection(api: ReturnType<typeof useSession>['api'], serviceType: string): Promise<void> {
  const { authUrl } = await api.get<{ authUrl: string }>(`/credentials/oauth/${serviceType}/auth`);
  window.location.assign(authUrl);
}

function ChooseService() {
  const [value, setValue] = useState('');
  return (
    <section className="card" aria-labelledby="connect-any">
      <h2 id="connect-any">Connect a service</h2>
      <form
        aria-label="Connect a service"
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(`/credentials?serviceType=${encodeURIComponent(value.trim())}`);
        }}
      >
        <TextField
          label="Service type"
          required
          pattern="[a-z][a-z0-9_]*"
          placeholder="github"
          value={value}
          onChange={(e) => setValue(e.target.value)}
        />
        <button type="submit">Continue</button>
      </form>
    </section>
  );
}

function ConnectPanel({
  serviceType,
  existing,
  onStored,
}: {
  serviceType: string;
  existing: StoredCredential | null;
  onStored: () => void;
}) {
  const { api } = useSession();
  const provider = useResource<{ provider: CredentialProvider }>(`/credential-providers/by-service/${serviceType}`);
  const known = provider.data?.provider ?? null;
  const providerMissing = provider.error instanceof ApiError && provider.error.status === 404;
  const [kind, setKind] = useState<'api_key' | 'jwt' | null>(null);
  const chosen = kind ?? (known?.authType === 'jwt' ? 'jwt' : 'api_key');
  const [secret, setSecret] = useState('');
  const [expiresAt, setExpiresAt] = useState('');
  const [stored, setStored] = useState(false);
  const store = useAction();
  const oauth = useAction();
  const connectUrl = typeof known?.config.connectUrl === 'string' ? known.config.connectUrl : null;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setStored(false);
    void store.run(async () => {
      if (chosen === 'jwt') {
        const when = new Date(expiresAt);
        if (Number.isNaN(when.getTime())) throw new Error('Enter when the token expires.');
        await api.post('/credentials/jwt', { serviceType, token: secret, expiresAt: when.toISOString() });
      } else {
        await api.post('/credentials/apikey', { serviceType, apiKey: secret });
      }
      setSecret('');
      setStored(true);
      onStored();
    });
  };

  const startOAuth = () => void oauth.run(() => startOAuthConnection(api, serviceType));

  return (
    <section className="card" aria-labelledby="connect">
      <h2 id="connect">{known ? known.name : 'Store a credential'}</h2>
      {provider.loading ? <Loading what="the credential type" /> : null}
      {providerMissing ? (
        <p className="hint">
          No credential provider defines "{serviceType}"; you can still store a key or token for it.
        </p>
      ) : null}
      {provider.error && !providerMissing ? (
        <ErrorNotice error={provider.error} title="Could not look up the credential type" />
      ) : null}
      {known?.description ? <p>{known.description}</p> : null}
      {connectUrl ? (
        <p>
          Get your credential at{' '}
          <a href={connectUrl} target="_blank" rel="noreferrer">
            {connectUrl}
          </a>
          .
        </p>
      ) : null}
      {existing ? (
        <p className="notice">
          You already have{' '}
          {existing.kind === 'jwt'
            ? 'a JWT'
            : existing.kind === 'api_key'
              ? 'an API key'
              : `a ${existing.kind} credential`}{' '}
          for {serviceType}; storing a new one replaces it.
        </p>
      ) : null}
      {stored ? <Success>Stored {serviceType}. Agents that need it can now use it.</Success> : null}

      {known?.authType === 'oauth2' ? (
        <div className="oauth">
          <p>
            This service connects with OAuth: you sign in at the service and the vault keeps the tokens (renewed
            automatically).
          </p>
          <button type="button" onClick={startOAuth} disabled={oauth.busy}>
            {existing?.kind === 'oauth2' ? 'Reconnect with OAuth' : 'Connect with OAuth'}
          </button>
          {oauth.error instanceof ApiError && oauth.error.status === 501 ? (
            <p className="notice notice-error" role="alert">
              No OAuth authorization server is configured for this service (it answered 501 Not Implemented). Ask an
              administrator to set its issuer, or store a token or API key below instead.
            </p>
          ) : (
            <ErrorNotice error={oauth.error} title="OAuth failed" />
          )}
        </div>
      ) : null}

      <form onSubmit={submit} className="grid-form" aria-label={`Store a credential for ${serviceType}`}>
        <SelectField
          label="Credential kind"
          value={chosen}
          onChange={(e) => setKind(e.target.value as 'api_key' | 'jwt')}
          options={[
            { value: 'api_key', label: 'API key' },
            { value: 'jwt', label: 'JWT (token with an expiry)' },
          ]}
        />
        {chosen === 'jwt' ? (
          <>
            <TextAreaField
              label="Token"
              required
              rows={3}
              autoComplete="off"
              spellCheck={false}
              value={secret}
              onChange={(e) => setSecret(e.target.value)}
            />
            <TextField
              label="Expires at"
              type="datetime-local"
              required
              value={expiresAt}
              onChange={(e) => setExpiresAt(e.target.value)}
            />
          </>
        ) : (
          <TextField
            label="API key"
            type="password"
            required
            autoComplete="off"
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
          />
        )}
        <ErrorNotice error={store.error} title="Not stored" />
        <div className="form-actions">
          <button type="submit" disabled={store.busy}>
            {store.busy ? 'Storing…' : `Store ${chosen === 'jwt' ? 'token' : 'API key'}`}
          </button>
        </div>
      </form>
    </section>
  );
}
