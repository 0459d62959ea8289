import { useState, type FormEvent } from 'react';
import { ConfirmButton } from '../components/confirm-button.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { DataTable } from '../components/data-table.js';
import { CheckboxField, TenantField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { OneTimeSecret } from '../components/one-time-secret.js';
import { hasRole } from '../navigation.js';
import { Link } from '../router.js';
import { useSession, useUser } from '../session.js';
import type { Agent } from '../types.js';
import { useAction, useResource } from '../use-resource.js';

/** Agents: create (runtime token shown once), enable/disable, rotate the token, delete. */
export function AgentsPage() {
  const { api } = useSession();
  const agents = useResource<{ agents: Agent[] }>('/admin/agents');
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const action = useAction();

  const act = (work: () => Promise<unknown>) => void action.run(work).then(agents.reload);

  return (
    <Layout title="Agents">
      {secret ? <OneTimeSecret label={secret.label} value={secret.value} onDismiss={() => setSecret(null)} /> : null}
      <CreateAgentForm
        onCreated={(agent, token) => {
          setSecret({ label: `Runtime token of ${agent.name}`, value: token });
          agents.reload();
        }}
      />
      <section aria-labelledby="agents-list">
        <h2 id="agents-list">Your agents</h2>
        <ErrorNotice error={action.error} />
        {agents.loading && !agents.data ? <Loading what="agents" /> : null}
        <ErrorNotice error={agents.error} title="Could not load the agents" />
        {agents.data && agents.data.agents.length === 0 ? <Empty>No agents yet. Create one above.</Empty> : null}
        {agents.data && agents.data.agents.length > 0 ? (
          <DataTable caption="Agents" columns={['Name', 'Status', 'Upstream', 'Token', 'Actions']}>
            {agents.data.agents.map((a) => (
              <tr key={a.id}>
                <td data-label="Name">
                  <Link href={`/agents/${a.id}`}>{a.name}</Link>
                  {a.requireConfirmation ? <span className="tag">confirms tool calls</span> : null}
                </td>
                <td data-label="Status">
                  <span className={a.isActive ? 'status ok' : 'status off'}>{a.isActive ? 'Enabled' : 'Disabled'}</span>
                </td>
                <td data-label="Upstream" className="mono wrap">
                  {a.upstreamUrl}
                </td>
                <td data-label="Token" className="mono">
                  {a.runtimeTokenPrefix}…
                </td>
                <td data-label="Actions" className="actions">
                  <button
                    type="button"
                    className="secondary"
                    disabled={action.busy}
                    onClick={() => act(() => api.post(`/admin/agents/${a.id}/${a.isActive ? 'disable' : 'enable'}`))}
                  >
                    {a.isActive ? 'Disable' : 'Enable'}
                    <span className="sr-only"> {a.name}</span>
                  </button>
                  <button
                    type="button"
                    className="secondary"
                    disabled={action.busy}
                    onClick={() =>
                      act(async () => {
                        const answer = await api.post<{ runtime_token: string }>(
                          `/admin/agents/${a.id}/regenerate-token`,
                        );
                        setSecret({
                          label: `New runtime token of ${a.name} (the old one no longer works)`,
                          value: answer.runtime_token,
                        });
                      })
                    }
                  >
                    Rotate token<span className="sr-only"> of {a.name}</span>
                  </button>
                  <ConfirmButton
                    label={`Delete`}
                    confirmLabel={`Delete ${a.name}`}
                    disabled={action.busy}
                    onConfirm={() => act(() => api.del(`/admin/agents/${a.id}`))}
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

/** The create form; as the spec says, it does not expose requiredCredentials (edited on the agent's page). */
function CreateAgentForm({ onCreated }: { onCreated: (agent: Agent, token: string) => void }) {
  const { api } = useSession();
  const admin = hasRole(useUser(), 'admin');
  const [form, setForm] = useState({
    name: '',
    upstreamUrl: '',
    upstreamSecret: '',
    description: '',
    requireConfirmation: false,
    tenantId: '',
  });
  const action = useAction();
  const set = (patch: Partial<typeof form>) => setForm((f) => ({ ...f, ...patch }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const body: Record<string, unknown> = {
        name: form.name,
        upstreamUrl: form.upstreamUrl,
        requireConfirmation: form.requireConfirmation,
      };
      if (form.upstreamSecret) body.upstreamSecret = form.upstreamSecret;
      if (form.description) body.description = form.description;
      if (form.tenantId.trim()) body.tenantId = form.tenantId.trim();
      const answer = await api.post<{ agent: Agent; runtime_token: string }>('/admin/agents', body);
      setForm({
        name: '',
        upstreamUrl: '',
        upstreamSecret: '',
        description: '',
        requireConfirmation: false,
        tenantId: '',
      });
      onCreated(answer.agent, answer.runtime_token);
    });
  };

  return (
    <section className="card" aria-labelledby="create-agent">
      <h2 id="create-agent">Create an agent</h2>
      <form onSubmit={submit} aria-label="Create an agent" className="grid-form">
        <TextField label="Name" required value={form.name} onChange={(e) => set({ name: e.target.value })} />
        <TextField
          label="Upstream URL"
          type="url"
          required
          placeholder="https://agent.example.com/run"
          value={form.upstreamUrl}
          onChange={(e) => set({ upstreamUrl: e.target.value })}
        />
        <TextField
          label="Upstream secret (optional)"
          type="password"
          autoComplete="off"
          hint="Sent to the upstream as a bearer token; never shown again."
          value={form.upstreamSecret}
          onChange={(e) => set({ upstreamSecret: e.target.value })}
        />
        <TextField
          label="Description (optional)"
          value={form.description}
          onChange={(e) => set({ description: e.target.value })}
        />
        {admin ? <TenantField value={form.tenantId} onChange={(tenantId) => set({ tenantId })} /> : null}
        <CheckboxField
          label="Tool calls require confirmation"
          checked={form.requireConfirmation}
          onChange={(e) => set({ requireConfirmation: e.target.checked })}
        />
        <ErrorNotice error={action.error} title="The agent was not created" />
        <div className="form-actions">
          <button type="submit" disabled={action.busy}>
            {action.busy ? 'Creating…' : 'Create agent'}
          </button>
        </div>
      </form>
    </section>
  );
}
