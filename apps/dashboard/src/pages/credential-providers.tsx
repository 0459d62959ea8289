import { useState, type FormEvent } from 'react';
import { ConfirmButton } from '../components/confirm-button.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { SelectField, TenantField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { canManageProviders, describeScope, hasRole } from '../navigation.js';
import { Link } from '../router.js';
import { useSession, useUser } from '../session.js';
import type { CredentialAuthType, CredentialProvider } from '../types.js';
import { useAction, useResource } from '../use-resource.js';

const AUTH_TYPES: Array<{ value: CredentialAuthType; label: string }> = [
  { value: 'api_key', label: 'API key' },
  { value: 'jwt', label: 'JWT' },
  { value: 'oauth2', label: 'OAuth 2' },
  { value: 'basic', label: 'Basic' },
];

/** Credential providers: the credential types users can connect (secrets in config come back masked). */
export function CredentialProvidersPage() {
  const { api } = useSession();
  const user = useUser();
  const providers = useResource<{ providers: CredentialProvider[] }>('/credential-providers');
  const action = useAction();
  const manage = canManageProviders(user);

  return (
    <Layout title="Credential providers">
      {manage ? <CreateCredentialProviderForm onCreated={providers.reload} /> : null}
      <section aria-labelledby="cp-list">
        <h2 id="cp-list">Credential types</h2>
        <ErrorNotice error={action.error} />
        {providers.loading && !providers.data ? <Loading what="credential providers" /> : null}
        <ErrorNotice error={providers.error} title="Could not load the credential providers" />
        {providers.data?.providers.length === 0 ? <Empty>No credential providers defined.</Empty> : null}
        <ul className="cards">
          {providers.data?.providers.map((p) => (
            <li key={p.id} className="card">
              <h3>{p.name}</h3>
              <dl className="facts">
                <dt>Service type</dt>
                <dd className="mono">{p.serviceType}</dd>
                <dt>Kind</dt>
                <dd>{p.authType}</dd>
                <dt>Scope</dt>
                <dd>{describeScope(p.tenantId)}</dd>
                {Object.keys(p.config).length > 0 ? (
                  <>
                    <dt>Config</dt>
                    <dd>
                      <pre className="json">{JSON.stringify(p.config, null, 2)}</pre>
                    </dd>
                  </>
                ) : null}
              </dl>
              {p.description ? <p>{p.description}</p> : null}
              <div className="actions">
                <Link className="button-link" href={`/credentials?serviceType=${encodeURIComponent(p.serviceType)}`}>
                  Connect {p.name}
                </Link>
                {manage ? (
                  <ConfirmButton
                    label="Delete"
                    confirmLabel={`Delete ${p.name}`}
                    disabled={action.busy}
                    onConfirm={() =>
                      void action.run(() => api.del(`/credential-providers/${p.id}`)).then(providers.reload)
                    }
                  />
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      </section>
    </Layout>
  );
}

function CreateCredentialProviderForm({ onCreated }: { onCreated: () => void }) {
  const { api } = useSession();
  const admin = hasRole(useUser(), 'admin');
  const empty = {
    tenantId: '',
    name: '',
    serviceType: '',
    authType: 'api_key' as CredentialAuthType,
    description: '',
    connectUrl: '',
    clientId: '',
    clientSecret: '',
    scopes: '',
    headerName: '',
    prefix: '',
  };
  const [form, setForm] = useState(empty);
  const action = useAction();
  const set = (patch: Partial<typeof form>) => setForm((f) => ({ ...f, ...patch }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const config: Record<string, unknown> = {};
      if (form.connectUrl) config.connectUrl = form.connectUrl;
      if (form.authType === 'oauth2') {
        config.clientId = form.clientId;
        config.clientSecret = form.clientSecret;
        config.scopes = form.scopes.split(/[\s,]+/).filter(Boolean);
      }
      if (form.authType === 'jwt' && form.headerName)
        config.jwt = form.prefix
          ? { headerName: form.headerName, prefix: form.prefix }
          : { headerName: form.headerName };
      const body: Record<string, unknown> = {
        name: form.name,
        serviceType: form.serviceType,
        authType: form.authType,
        config,
      };
      if (form.description) body.description = form.description;
      if (form.tenantId.trim()) body.tenantId = form.tenantId.trim();
      await api.post('/credential-providers', body);
      setForm(empty);
      onCreated();
    });
  };

  return (
    <section className="card" aria-labelledby="add-cp">
      <h2 id="add-cp">Define a credential type</h2>
      <form onSubmit={submit} className="grid-form" aria-label="Define a credential type">
        <TextField label="Name" required value={form.name} onChange={(e) => set({ name: e.target.value })} />
        <TextField
          label="Service type"
          required
          pattern="[a-z][a-z0-9_]*"
          hint="Lowercase letters, digits and _, starting with a letter (e.g. github)."
          value={form.serviceType}
          onChange={(e) => set({ serviceType: e.target.value })}
        />
        <SelectField
          label="Kind"
          options={AUTH_TYPES}
          value={form.authType}
          onChange={(e) => set({ authType: e.target.value as CredentialAuthType })}
        />
        <TextField
          label="Description (optional)"
          value={form.description}
          onChange={(e) => set({ description: e.target.value })}
        />
        <TextField
          label="Connect URL (optional)"
          type="url"
          hint="Where users obtain this credential."
          value={form.connectUrl}
          onChange={(e) => set({ connectUrl: e.target.value })}
        />
        {form.authType === 'oauth2' ? (
          <>
            <TextField
              label="OAuth client ID"
              required
              value={form.clientId}
              onChange={(e) => set({ clientId: e.target.value })}
            />
            <TextField
              label="OAuth client secret"
              type="password"
              autoComplete="off"
              required
              value={form.clientSecret}
              onChange={(e) => set({ clientSecret: e.target.value })}
            />
            <TextField
              label="OAuth scopes"
              hint="Separated by spaces or commas."
              value={form.scopes}
              onChange={(e) => set({ scopes: e.target.value })}
            />
          </>
        ) : null}
        {form.authType === 'jwt' ? (
          <>
            <TextField
              label="JWT header name (optional)"
              placeholder="Authorization"
              value={form.headerName}
              onChange={(e) => set({ headerName: e.target.value })}
            />
            <TextField
              label="JWT prefix (optional)"
              placeholder="Bearer "
              value={form.prefix}
              onChange={(e) => set({ prefix: e.target.value })}
            />
          </>
        ) : null}
        {admin ? <TenantField value={form.tenantId} onChange={(tenantId) => set({ tenantId })} /> : null}
        <ErrorNotice error={action.error} title="Not created" />
        <div className="form-actions">
          <button type="submit" disabled={action.busy}>
            Create credential type
          </button>
        </div>
      </form>
    </section>
  );
}
