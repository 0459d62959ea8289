import { useEffect, useState, type FormEvent } from 'react';
import { Empty, ErrorNotice, Loading, Success } from '../components/feedback.js';
import { CheckboxField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { canManageProviders, describeScope } from '../navigation.js';
import { Link } from '../router.js';
import { useSession, useUser } from '../session.js';
import type { AccessRule, Agent, RequiredCredential } from '../types.js';
import { useAction, useResource } from '../use-resource.js';

const SERVICE_TYPE = /^[a-z][a-z0-9_]*$/;

/** One agent: its settings and its required credentials (which the create form leaves out), saved through PUT. */
export function AgentDetailPage({ id }: { id: string }) {
  const agent = useResource<{ agent: Agent }>(`/admin/agents/${encodeURIComponent(id)}`);
  const manager = canManageProviders(useUser());
  return (
    <Layout title={agent.data ? `Agent ${agent.data.agent.name}` : 'Agent'}>
      <p>
        <Link href="/agents">← All agents</Link>
      </p>
      {agent.loading && !agent.data ? <Loading what="the agent" /> : null}
      <ErrorNotice error={agent.error} title="Could not load the agent" />
      {agent.data ? <AgentEditor agent={agent.data.agent} onSaved={agent.reload} /> : null}
      {agent.data && manager ? <AgentRules agentId={agent.data.agent.id} /> : null}
    </Layout>
  );
}

/** The rules whose subject is this agent (whitelist: without an allow rule it reaches no provider). */
function AgentRules({ agentId }: { agentId: string }) {
  const rules = useResource<{ rules: AccessRule[] }>(`/admin/provider-access/agent/${encodeURIComponent(agentId)}`);
  return (
    <section className="card" aria-labelledby="agent-rules">
      <h2 id="agent-rules">Access rules</h2>
      {rules.loading ? <Loading what="the agent's rules" /> : null}
      <ErrorNotice error={rules.error} title="Could not load the rules" />
      {rules.data?.rules.length === 0 ? <Empty>No rules: this agent cannot reach any tool provider yet.</Empty> : null}
      {rules.data && rules.data.rules.length > 0 ? (
        <ul>
          {rules.data.rules.map((r) => (
            <li key={r.id}>
              <strong>{r.action.replace('_', ' ')}</strong> tools <code>{r.toolPattern}</code> on{' '}
              {r.providerId === '*' ? 'every provider' : <code>{r.providerId}</code>}
              {r.riskLevel ? ` (risk ${r.riskLevel})` : ''}
            </li>
          ))}
        </ul>
      ) : null}
      <p>
        <Link href="/access-rules">Manage access rules</Link>
      </p>
    </section>
  );
}

function AgentEditor({ agent, onSaved }: { agent: Agent; onSaved: () => void }) {
  const { api } = useSession();
  const [form, setForm] = useState({
    name: agent.name,
    upstreamUrl: agent.upstreamUrl,
    description: agent.description ?? '',
    requireConfirmation: agent.requireConfirmation,
  });
  const [creds, setCreds] = useState<RequiredCredential[]>(agent.requiredCredentials);
  const [saved, setSaved] = useState<string | null>(null);
  const settings = useAction();
  const credentials = useAction();
  useEffect(() => setCreds(agent.requiredCredentials), [agent.requiredCredentials]);

  const saveSettings = (e: FormEvent) => {
    e.preventDefault();
    setSaved(null);
    void settings.run(async () => {
      await api.put(`/admin/agents/${agent.id}`, { ...form, description: form.description || null });
      setSaved('Settings saved.');
      onSaved();
    });
  };

  const saveCredentials = (e: FormEvent) => {
    e.preventDefault();
    setSaved(null);
    void credentials.run(async () => {
      const bad = creds.find((c) => !SERVICE_TYPE.test(c.serviceType));
      if (bad)
        throw new Error(
          `Service type "${bad.serviceType}" must start with a lowercase letter and use only a-z, 0-9 and _.`,
        );
      const requiredCredentials = creds.map((c) =>
        c.description ? { serviceType: c.serviceType, description: c.description } : { serviceType: c.serviceType },
      );
      await api.put(`/admin/agents/${agent.id}`, { requiredCredentials });
      setSaved('Required credentials saved.');
      onSaved();
    });
  };

  return (
    <>
      {saved ? <Success>{saved}</Success> : null}
      <dl className="facts">
        <dt>ID</dt>
        <dd className="mono">{agent.id}</dd>
        <dt>Status</dt>
        <dd>{agent.isActive ? 'Enabled' : 'Disabled (kill switch)'}</dd>
        <dt>Runtime token</dt>
        <dd className="mono">{agent.runtimeTokenPrefix}… (rotate it on the agents list)</dd>
        <dt>Upstream secret</dt>
        <dd>{agent.hasUpstreamSecret ? 'set' : 'none'}</dd>
        <dt>Scope</dt>
        <dd>{describeScope(agent.tenantId)}</dd>
      </dl>
      <section className="card" aria-labelledby="agent-settings">
        <h2 id="agent-settings">Settings</h2>
        <form onSubmit={saveSettings} className="grid-form" aria-label="Agent settings">
          <TextField
            label="Name"
            required
            value={form.name}
            onChange={(e) => setForm({ ...form, name: e.target.value })}
          />
          <TextField
            label="Upstream URL"
            type="url"
            required
            value={form.upstreamUrl}
            onChange={(e) => setForm({ ...form, upstreamUrl: e.target.value })}
          />
          <TextField
            label="Description"
            value={form.description}
            onChange={(e) => setForm({ ...form, description: e.target.value })}
          />
          <CheckboxField
            label="Tool calls require confirmation"
            checked={form.requireConfirmation}
            onChange={(e) => setForm({ ...form, requireConfirmation: e.target.checked })}
          />
          <ErrorNotice error={settings.error} title="Not saved" />
          <div className="form-actions">
            <button type="submit" disabled={settings.busy}>
              Save settings
            </button>
          </div>
        </form>
      </section>
      <section className="card" aria-labelledby="agent-credentials">
        <h2 id="agent-credentials">Required credentials</h2>
        <p className="hint">
          Invoking the agent needs the user to have connected each of these service types in the vault; they are passed
          upstream as X-Credential-… headers.
        </p>
        <form onSubmit={saveCredentials} aria-label="Required credentials">
          {creds.length === 0 ? <Empty>None: the agent needs no user credentials.</Empty> : null}
          {creds.map((c, i) => (
            <fieldset key={i} className="row-fieldset">
              <legend className="sr-only">Credential {i + 1}</legend>
              <TextField
                label="Service type"
                required
                pattern="[a-z][a-z0-9_]*"
                value={c.serviceType}
                onChange={(e) => setCreds(creds.map((x, j) => (j === i ? { ...x, serviceType: e.target.value } : x)))}
              />
              <TextField
                label="Description"
                value={c.description ?? ''}
                onChange={(e) => setCreds(creds.map((x, j) => (j === i ? { ...x, description: e.target.value } : x)))}
              />
              <button
                type="button"
                className="danger-outline"
                onClick={() => setCreds(creds.filter((_, j) => j !== i))}
              >
                Remove<span className="sr-only"> {c.serviceType || `credential ${i + 1}`}</span>
              </button>
            </fieldset>
          ))}
          <ErrorNotice error={credentials.error} title="Not saved" />
          <div className="form-actions">
            <button
              type="button"
              className="secondary"
              onClick={() => setCreds([...creds, { serviceType: '', description: '' }])}
            >
              Add a credential
            </button>
            <button type="submit" disabled={credentials.busy}>
              Save required credentials
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
