import { useState, type FormEvent } from 'react';
import { ConfirmButton } from '../components/confirm-button.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { SelectField, TenantField, TextField } from '../components/fields.js';
import { EditTokenExchange } from '../components/edit-token-exchange.js';
import { Layout } from '../components/layout.js';
import { TokenExchangeFields } from '../components/token-exchange-fields.js';
import { canManageProviders, describeScope, hasRole } from '../navigation.js';
import { useSession, useUser } from '../session.js';
import { ExposedNames } from '../components/exposed-names.js';
import type {
  CredentialProvider,
  ExposedToolsReport,
  ToolPin,
  ToolProvider,
  ToolProviderAuthType,
  UpstreamTool,
} from '../types.js';
import { useAction, useResource } from '../use-resource.js';
import { describeMcpOAuth } from './mcp-oauth-description.js';
import {
  describeTokenExchange,
  EMPTY_TOKEN_EXCHANGE,
  tokenExchangeBody,
  tokenExchangeFieldError,
} from './token-exchange-form.js';

/** Tool providers (MCP servers behind the gateway) and, on demand, the tools each one serves. */
export function ToolProvidersPage() {
  const { api } = useSession();
  const user = useUser();
  const providers = useResource<{ providers: ToolProvider[] }>('/admin/tool-providers');
  const action = useAction();
  const manage = canManageProviders(user);
  // Only for mcp_oauth cards: how the gateway's client at the upstream was obtained.
  const hasMcpOAuth = providers.data?.providers.some((p) => p.authType === 'mcp_oauth') ?? false;
  const credentialProviders = useResource<{ providers: CredentialProvider[] }>(
    hasMcpOAuth ? '/credential-providers' : null,
  );
  // The names clients actually list and call, for every card at once.
  const exposed = useResource<ExposedToolsReport>(providers.data ? '/mcp/exposed-tools' : null);

  return (
    <Layout title="Tool providers">
      {manage ? <CreateProviderForm onCreated={() => (providers.reload(), exposed.reload())} /> : null}
      <section aria-labelledby="providers-list">
        <h2 id="providers-list">Providers</h2>
        <ErrorNotice error={action.error} />
        {providers.loading && !providers.data ? <Loading what="tool providers" /> : null}
        <ErrorNotice error={providers.error} title="Could not load the providers" />
        {providers.data?.providers.length === 0 ? <Empty>No tool providers yet.</Empty> : null}
        <ul className="cards">
          {providers.data?.providers.map((p) => (
            <li key={p.id} className="card">
              <h3>{p.name}</h3>
              <dl className="facts">
                <dt>ID</dt>
                <dd className="mono">{p.id}</dd>
                <dt>Tools matching</dt>
                <dd className="mono">{p.pattern}</dd>
                <dt>Endpoint</dt>
                <dd className="mono wrap">{p.endpoint ?? 'hidden (only those who may edit the provider see it)'}</dd>
                <dt>Upstream auth</dt>
                <dd>
                  {p.authType === 'none'
                    ? 'none'
                    : p.authType === 'token_exchange'
                      ? describeTokenExchange(p)
                      : p.authType === 'mcp_oauth'
                        ? describeMcpOAuth(p, credentialProviders.data?.providers)
                        : PER_USER.has(p.authType)
                          ? `${p.authType}: each user's own ${p.credentialServiceType ?? '?'} credential`
                          : `${p.authType}${p.hasAuthSecret ? ' (secret set)' : ' (no secret)'}`}
                </dd>
                <dt>Priority</dt>
                <dd>{p.priority}</dd>
                <dt>Tools exposed as</dt>
                <dd>
                  <ExposedNames provider={p} report={exposed.data ?? null} />
                </dd>
                <dt>Scope</dt>
                <dd>{describeScope(p.tenantId)}</dd>
              </dl>
              {p.description ? <p>{p.description}</p> : null}
              <ProviderTools provider={p} />
              {/* The endpoint is hidden from those who may not edit the provider (a tenant admin on a global one). */}
              {manage && p.authType === 'token_exchange' && p.endpoint !== null ? (
                <EditTokenExchange provider={p} onSaved={providers.reload} />
              ) : null}
              {manage ? (
                <div className="actions">
                  <ConfirmButton
                    label="Delete"
                    confirmLabel={`Delete ${p.name}`}
                    disabled={action.busy}
                    onConfirm={() =>
                      void action.run(() => api.del(`/admin/tool-providers/${p.id}`)).then(providers.reload)
                    }
                  />
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      </section>
    </Layout>
  );
}

function ProviderTools({ provider }: { provider: ToolProvider }) {
  const [open, setOpen] = useState(false);
  const tools = useResource<{ tools: UpstreamTool[] }>(open ? `/admin/tool-providers/${provider.id}/tools` : null);
  // The upstream lists a quarantined tool as it is now (an injected description included): mark it.
  const quarantined = useResource<{ pins: ToolPin[] }>(
    open ? `/admin/tool-pins?state=quarantined&providerId=${encodeURIComponent(provider.id)}` : null,
  );
  const held = new Map((quarantined.data?.pins ?? []).map((pin) => [pin.toolName, pin.status]));
  return (
    <div className="tools">
      <button type="button" className="secondary" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'Hide tools' : 'Show tools'}
        <span className="sr-only"> of {provider.name}</span>
      </button>
      {open ? (
        <div>
          {tools.loading ? <Loading what={`the tools of ${provider.name}`} /> : null}
          <ErrorNotice error={tools.error} title="The upstream's tool list could not be fetched" />
          {tools.data?.tools.length === 0 ? <Empty>The server lists no tools.</Empty> : null}
          {tools.data && tools.data.tools.length > 0 ? (
            <ul className="tool-list" aria-label={`Tools of ${provider.name}`}>
              {tools.data.tools.map((t) => (
                <li key={t.name} className={held.has(t.name) ? 'quarantined' : undefined}>
                  <code>{t.name}</code>
                  {held.has(t.name) ? (
                    <>
                      <span className="badge quarantined" data-testid="quarantined">
                        quarantined ({held.get(t.name)})
                      </span>
                      <span className="hint"> not served to agents until approved on Tool pins</span>
                    </>
                  ) : null}
                  {t.description ? <span> — {t.description}</span> : null}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

const AUTH_TYPES: Array<{ value: ToolProviderAuthType; label: string }> = [
  { value: 'none', label: 'None' },
  { value: 'bearer', label: 'Bearer token' },
  { value: 'api_key', label: 'API key (X-API-Key)' },
  { value: 'user_oauth', label: "The user's own OAuth token (Bearer)" },
  { value: 'user_key', label: "The user's own key (X-API-Key)" },
  { value: 'mcp_oauth', label: "MCP authorization: each user's own token (discovered)" },
  { value: 'token_exchange', label: "Token exchange: the caller's sign-in token exchanged (RFC 8693)" },
];

/** Auth types that send the calling user's credential of a service type rather than a provider secret. */
const PER_USER: ReadonlySet<ToolProviderAuthType> = new Set(['user_oauth', 'user_key']);

function CreateProviderForm({ onCreated }: { onCreated: () => void }) {
  const { api } = useSession();
  const admin = hasRole(useUser(), 'admin');
  const empty = {
    name: '',
    pattern: '*',
    endpoint: '',
    authType: 'none' as ToolProviderAuthType,
    authSecret: '',
    credentialServiceType: '',
    clientId: '',
    clientSecret: '',
    priority: '0',
    description: '',
    namePrefix: '',
    tenantId: '',
    tokenExchange: EMPTY_TOKEN_EXCHANGE,
  };
  const [form, setForm] = useState(empty);
  const action = useAction();
  const set = (patch: Partial<typeof form>) => setForm((f) => ({ ...f, ...patch }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const body: Record<string, unknown> = {
        name: form.name,
        pattern: form.pattern,
        endpoint: form.endpoint,
        authType: form.authType,
        priority: Number(form.priority),
      };
      if (form.authType === 'mcp_oauth') {
        // The gateway registers itself at the upstream's authorization server; an entered client is for servers that refuse (400 CLIENT_ID_REQUIRED).
        if (form.clientId.trim() && form.clientSecret)
          body.upstreamClient = { clientId: form.clientId.trim(), clientSecret: form.clientSecret };
      } else if (form.authType === 'token_exchange') body.tokenExchange = tokenExchangeBody(form.tokenExchange);
      else if (PER_USER.has(form.authType)) body.credentialServiceType = form.credentialServiceType.trim();
      else if (form.authType !== 'none' && form.authSecret) body.authSecret = form.authSecret;
      if (form.description) body.description = form.description;
      if (form.namePrefix) body.namePrefix = form.namePrefix;
      if (form.tenantId.trim()) body.tenantId = form.tenantId.trim();
      await api.post('/admin/tool-providers', body);
      setForm(empty);
      onCreated();
    });
  };

  return (
    <section className="card" aria-labelledby="add-provider">
      <h2 id="add-provider">Add a tool provider</h2>
      <form onSubmit={submit} className="grid-form" aria-label="Add a tool provider">
        <TextField label="Name" required value={form.name} onChange={(e) => set({ name: e.target.value })} />
        <TextField
          label="Tool name pattern"
          required
          hint="A glob: * matches every tool, github_* a prefix."
          value={form.pattern}
          onChange={(e) => set({ pattern: e.target.value })}
        />
        <TextField
          label="MCP endpoint URL"
          type="url"
          required
          placeholder="https://mcp.example.com/mcp"
          value={form.endpoint}
          onChange={(e) => set({ endpoint: e.target.value })}
        />
        <SelectField
          label="Upstream authentication"
          options={AUTH_TYPES}
          value={form.authType}
          onChange={(e) => set({ authType: e.target.value as ToolProviderAuthType })}
        />
        {form.authType === 'mcp_oauth' ? (
          <>
            <TextField
              label="Client ID (optional)"
              hint="Only when the server's authorization server does not register the gateway by itself; users connect once on their credentials page."
              value={form.clientId}
              onChange={(e) => set({ clientId: e.target.value })}
            />
            <TextField
              label="Client secret (optional)"
              type="password"
              autoComplete="off"
              value={form.clientSecret}
              onChange={(e) => set({ clientSecret: e.target.value })}
            />
          </>
        ) : form.authType === 'token_exchange' ? (
          <TokenExchangeFields
            value={form.tokenExchange}
            onChange={(patch) => set({ tokenExchange: { ...form.tokenExchange, ...patch } })}
            error={tokenExchangeFieldError(action.error)}
          />
        ) : PER_USER.has(form.authType) ? (
          <TextField
            label="Credential service type"
            required
            pattern="[a-z][a-z0-9_]*"
            hint="Each call carries the calling user's own credential of this service type (users connect it on their credentials page)."
            value={form.credentialServiceType}
            onChange={(e) => set({ credentialServiceType: e.target.value })}
          />
        ) : form.authType !== 'none' ? (
          <TextField
            label="Upstream secret"
            type="password"
            autoComplete="off"
            value={form.authSecret}
            onChange={(e) => set({ authSecret: e.target.value })}
          />
        ) : null}
        <TextField
          label="Priority"
          type="number"
          step={1}
          hint="When providers first offer the same tool name together, the higher keeps the bare name."
          value={form.priority}
          onChange={(e) => set({ priority: e.target.value })}
        />
        <TextField
          label="Tool name prefix (optional)"
          pattern="[a-z0-9][a-z0-9_\-]*"
          maxLength={16}
          placeholder="github"
          hint="Exposes its tools as <prefix>__<tool> on the unified endpoint: up to 16 of a-z, 0-9, _ and -."
          value={form.namePrefix}
          onChange={(e) => set({ namePrefix: e.target.value })}
        />
        <TextField
          label="Description (optional)"
          value={form.description}
          onChange={(e) => set({ description: e.target.value })}
        />
        {admin ? <TenantField value={form.tenantId} onChange={(tenantId) => set({ tenantId })} /> : null}
        <ErrorNotice error={action.error} title="The provider was not added" />
        <div className="form-actions">
          <button type="submit" disabled={action.busy}>
            {action.busy ? 'Adding…' : 'Add provider'}
          </button>
        </div>
      </form>
    </section>
  );
}
