import { useState, type FormEvent } from 'react';
import { ConfirmButton } from '../components/confirm-button.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { DataTable } from '../components/data-table.js';
import { CheckboxField, TenantField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { OneTimeSecret } from '../components/one-time-secret.js';
import { hasRole } from '../navigation.js';
import { useSession, useUser } from '../session.js';
import { API_KEY_SCOPES, type ApiKey, type ApiKeyScope } from '../types.js';
import { useAction, useResource } from '../use-resource.js';

const SCOPE_WORDS: Record<ApiKeyScope, string> = {
  'credentials:resolve': 'credentials:resolve — resolve and check credentials (runtimes)',
  'credentials:read': 'credentials:read — list stored credentials',
  'credentials:write': 'credentials:write — store and delete credentials',
};

/** API keys (gk_…) for server-to-server calls: the full key is shown once. */
export function ApiKeysPage() {
  const { api } = useSession();
  const keys = useResource<{ apiKeys: ApiKey[] }>('/admin/api-keys');
  const admin = hasRole(useUser(), 'admin');
  const [name, setName] = useState('');
  const [tenantId, setTenantId] = useState('');
  const [scopes, setScopes] = useState<ApiKeyScope[]>(['credentials:resolve']);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const create = useAction();
  const revoke = useAction();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run(async () => {
      const answer = await api.post<{ apiKey: ApiKey; key: string }>(
        '/admin/api-keys',
        tenantId.trim() ? { name, scopes, tenantId: tenantId.trim() } : { name, scopes },
      );
      setCreated({ name: answer.apiKey.name, key: answer.key });
      setName('');
      keys.reload();
    });
  };

  return (
    <Layout title="API keys">
      {created ? (
        <OneTimeSecret label={`API key ${created.name}`} value={created.key} onDismiss={() => setCreated(null)} />
      ) : null}
      <section className="card" aria-labelledby="create-key">
        <h2 id="create-key">Create an API key</h2>
        <form onSubmit={submit} aria-label="Create an API key">
          <TextField label="Name" required value={name} onChange={(e) => setName(e.target.value)} />
          {admin ? <TenantField value={tenantId} onChange={setTenantId} /> : null}
          <fieldset>
            <legend>Scopes</legend>
            {API_KEY_SCOPES.map((s) => (
              <CheckboxField
                key={s}
                label={SCOPE_WORDS[s]}
                checked={scopes.includes(s)}
                onChange={(e) => setScopes(e.target.checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
              />
            ))}
          </fieldset>
          <ErrorNotice error={create.error} title="The key was not created" />
          <div className="form-actions">
            <button type="submit" disabled={create.busy || scopes.length === 0}>
              Create key
            </button>
          </div>
        </form>
      </section>
      <section aria-labelledby="keys-list">
        <h2 id="keys-list">Keys</h2>
        <ErrorNotice error={revoke.error} />
        {keys.loading && !keys.data ? <Loading what="API keys" /> : null}
        <ErrorNotice error={keys.error} title="Could not load the keys" />
        {keys.data?.apiKeys.length === 0 ? <Empty>No API keys.</Empty> : null}
        {keys.data && keys.data.apiKeys.length > 0 ? (
          <DataTable caption="API keys" columns={['Name', 'Key', 'Scopes', 'Last used', 'Actions']}>
            {keys.data.apiKeys.map((k) => (
              <tr key={k.id}>
                <td data-label="Name">{k.name}</td>
                <td data-label="Key" className="mono">
                  {k.keyPrefix}…
                </td>
                <td data-label="Scopes">{k.scopes.join(', ')}</td>
                <td data-label="Last used">{k.lastUsedAt ? new Date(k.lastUsedAt).toLocaleString() : 'never'}</td>
                <td data-label="Actions">
                  <ConfirmButton
                    label="Revoke"
                    confirmLabel={`Revoke ${k.name}`}
                    disabled={revoke.busy}
                    onConfirm={() => void revoke.run(() => api.del(`/admin/api-keys/${k.id}`)).then(keys.reload)}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
        ) : null}
      </section>
    </Layout>
  );
}
