import { useState, type FormEvent } from 'react';
import { ConfirmButton } from '../components/confirm-button.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { DataTable } from '../components/data-table.js';
import { SelectField, TenantField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { EVALUATION_STEPS, explainDecision } from '../policy-explanation.js';
import { hasRole } from '../navigation.js';
import { useSession, useUser } from '../session.js';
import {
  RISK_LEVELS,
  type AccessRule,
  type Agent,
  type PolicyAction,
  type PolicyDecision,
  type ToolProvider,
} from '../types.js';
import { useAction, useResource } from '../use-resource.js';

const ACTIONS: Array<{ value: PolicyAction; label: string }> = [
  { value: 'allow', label: 'Allow' },
  { value: 'deny', label: 'Deny' },
  { value: 'require_confirmation', label: 'Require confirmation' },
];

/** Provider access rules, and a dry-run panel that says which rule decides a call and why. */
export function AccessRulesPage() {
  const { api } = useSession();
  const [filter, setFilter] = useState({ subjectType: '', action: '', providerId: '' });
  const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
  const rules = useResource<{ rules: AccessRule[] }>(`/admin/provider-access${query ? `?${query}` : ''}`);
  const providers = useResource<{ providers: ToolProvider[] }>('/admin/tool-providers');
  const agents = useResource<{ agents: Agent[] }>('/admin/agents');
  const action = useAction();

  const providerName = (id: string) =>
    id === '*' ? 'every provider' : (providers.data?.providers.find((p) => p.id === id)?.name ?? id);
  const subjectName = (r: AccessRule) =>
    r.subjectType === 'agent'
      ? (agents.data?.agents.find((a) => a.id === r.subjectId)?.name ?? r.subjectId)
      : r.subjectId;
  const providerOptions = [
    { value: '*', label: '* (every provider)' },
    ...(providers.data?.providers ?? []).map((p) => ({ value: p.id, label: p.name })),
  ];

  return (
    <Layout title="Access rules">
      <p className="hint">Agents are on a whitelist: without a matching allow rule an agent reaches no provider.</p>
      <CreateRuleForm providerOptions={providerOptions} agents={agents.data?.agents ?? []} onCreated={rules.reload} />
      <EvaluatePanel
        providerOptions={providerOptions.filter((p) => p.value !== '*')}
        agents={agents.data?.agents ?? []}
      />
      <section aria-labelledby="rules-list">
        <h2 id="rules-list">Rules</h2>
        <form className="filters" aria-label="Filter rules" onSubmit={(e) => e.preventDefault()}>
          <SelectField
            label="Subject"
            value={filter.subjectType}
            onChange={(e) => setFilter({ ...filter, subjectType: e.target.value })}
            options={[
              { value: '', label: 'Any' },
              { value: 'agent', label: 'Agents' },
              { value: 'user', label: 'Users' },
            ]}
          />
          <SelectField
            label="Action"
            value={filter.action}
            onChange={(e) => setFilter({ ...filter, action: e.target.value })}
            options={[{ value: '', label: 'Any' }, ...ACTIONS]}
          />
          <SelectField
            label="Provider"
            value={filter.providerId}
            onChange={(e) => setFilter({ ...filter, providerId: e.target.value })}
            options={[{ value: '', label: 'Any' }, ...providerOptions]}
          />
        </form>
        <ErrorNotice error={action.error} />
        {rules.loading && !rules.data ? <Loading what="rules" /> : null}
        <ErrorNotice error={rules.error} title="Could not load the rules" />
        {rules.data?.rules.length === 0 ? <Empty>No rules match.</Empty> : null}
        {rules.data && rules.data.rules.length > 0 ? (
          <DataTable
            caption="Access rules"
            columns={['Subject', 'Provider', 'Tools', 'Action', 'Risk', 'Rule', 'Actions']}
          >
            {rules.data.rules.map((r) => (
              <tr key={r.id}>
                <td data-label="Subject">
                  {r.subjectType} {subjectName(r)}
                </td>
                <td data-label="Provider">{providerName(r.providerId)}</td>
                <td data-label="Tools" className="mono">
                  {r.toolPattern}
                </td>
                <td data-label="Action">
                  <span className={`action ${r.action}`}>{r.action.replace('_', ' ')}</span>
                </td>
                <td data-label="Risk">{r.riskLevel ?? '—'}</td>
                <td data-label="Rule" className="mono small">
                  {r.id}
                </td>
                <td data-label="Actions">
                  <ConfirmButton
                    label="Delete"
                    confirmLabel="Delete rule"
                    disabled={action.busy}
                    onConfirm={() =>
                      void action.run(() => api.del(`/admin/provider-access/${r.id}`)).then(rules.reload)
                    }
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

type Option = { value: string; label: string };

function CreateRuleForm({
  providerOptions,
  agents,
  onCreated,
}: {
  providerOptions: Option[];
  agents: Agent[];
  onCreated: () => void;
}) {
  const { api } = useSession();
  const admin = hasRole(useUser(), 'admin');
  const empty = {
    tenantId: '',
    subjectType: 'agent',
    subjectId: '',
    providerId: '*',
    action: 'allow',
    toolPattern: '*',
    riskLevel: '',
    confirmationMode: '',
    confirmIn: '',
    description: '',
  };
  const [form, setForm] = useState(empty);
  const action = useAction();
  const set = (patch: Partial<typeof form>) => setForm((f) => ({ ...f, ...patch }));
  const subjectId = form.subjectType === 'agent' && !form.subjectId && agents[0] ? agents[0].id : form.subjectId;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const body: Record<string, unknown> = {
        subjectType: form.subjectType,
        subjectId,
        providerId: form.providerId,
        action: form.action,
        toolPattern: form.toolPattern || '*',
      };
      if (form.riskLevel) body.riskLevel = form.riskLevel;
      if (form.confirmationMode) body.confirmationMode = form.confirmationMode;
      const carriers = CONFIRM_IN[form.confirmIn];
      if (form.action === 'require_confirmation' && carriers) body.confirmCarriers = carriers;
      if (form.description) body.description = form.description;
      if (form.tenantId.trim()) body.tenantId = form.tenantId.trim();
      await api.post('/admin/provider-access', body);
      setForm({ ...empty, subjectType: form.subjectType, subjectId, providerId: form.providerId });
      onCreated();
    });
  };

  return (
    <section className="card" aria-labelledby="add-rule">
      <h2 id="add-rule">Add a rule</h2>
      <form onSubmit={submit} className="grid-form" aria-label="Add a rule">
        <SelectField
          label="Subject type"
          value={form.subjectType}
          onChange={(e) => set({ subjectType: e.target.value, subjectId: '' })}
          options={[
            { value: 'agent', label: 'Agent' },
            { value: 'user', label: 'User' },
          ]}
        />
        {form.subjectType === 'agent' && agents.length > 0 ? (
          <SelectField
            label="Agent"
            value={subjectId}
            onChange={(e) => set({ subjectId: e.target.value })}
            options={agents.map((a) => ({ value: a.id, label: a.name }))}
          />
        ) : (
          <TextField
            label={form.subjectType === 'agent' ? 'Agent ID' : 'User ID'}
            required
            value={form.subjectId}
            onChange={(e) => set({ subjectId: e.target.value })}
          />
        )}
        <SelectField
          label="Provider"
          value={form.providerId}
          onChange={(e) => set({ providerId: e.target.value })}
          options={providerOptions}
        />
        <SelectField
          label="Action"
          value={form.action}
          onChange={(e) => set({ action: e.target.value })}
          options={ACTIONS}
        />
        <TextField
          label="Tool pattern"
          hint="A glob over tool names; * for all."
          value={form.toolPattern}
          onChange={(e) => set({ toolPattern: e.target.value })}
        />
        <SelectField
          label="Risk level"
          value={form.riskLevel}
          onChange={(e) => set({ riskLevel: e.target.value })}
          options={[
            { value: '', label: 'Default for the action' },
            ...RISK_LEVELS.map((r) => ({ value: r, label: r })),
          ]}
        />
        <SelectField
          label="Confirmation mode"
          value={form.confirmationMode}
          onChange={(e) => set({ confirmationMode: e.target.value })}
          options={[
            { value: '', label: 'Not set' },
            { value: 'always', label: 'always' },
            { value: 'never', label: 'never' },
          ]}
        />
        {form.action === 'require_confirmation' ? (
          <SelectField
            label="Confirm in"
            hint="The person's own MCP client is an explicit opt-in: a client that accepts every question by itself would approve the call."
            value={form.confirmIn}
            onChange={(e) => set({ confirmIn: e.target.value })}
            options={[
              { value: '', label: 'Console and push (default)' },
              { value: 'client', label: "Console, push and the person's own MCP client" },
              { value: 'console', label: 'Console only' },
            ]}
          />
        ) : null}
        <TextField
          label="Description (optional)"
          value={form.description}
          onChange={(e) => set({ description: e.target.value })}
        />
        {admin ? <TenantField value={form.tenantId} onChange={(tenantId) => set({ tenantId })} /> : null}
        <ErrorNotice error={action.error} title="The rule was not added" />
        <div className="form-actions">
          <button type="submit" disabled={action.busy}>
            Add rule
          </button>
        </div>
      </form>
    </section>
  );
}

/** The carriers each "Confirm in" choice sends (the console is always one; no choice: the server's default). */
const CONFIRM_IN: Record<string, string[] | undefined> = {
  client: ['console', 'client', 'push'],
  console: ['console'],
};

function EvaluatePanel({ providerOptions, agents }: { providerOptions: Option[]; agents: Agent[] }) {
  const { api } = useSession();
  const [form, setForm] = useState({ userId: '', agentId: '', providerId: '', toolName: '' });
  const [answer, setAnswer] = useState<{ decision: PolicyDecision; toolName: string } | null>(null);
  const action = useAction();
  const agentId = form.agentId || (agents[0]?.id ?? '');
  const providerId = form.providerId || (providerOptions[0]?.value ?? '');

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const body: Record<string, string> = { providerId, toolName: form.toolName };
      if (form.userId) body.userId = form.userId;
      if (agentId && agentId !== 'none') body.agentId = agentId;
      setAnswer(null);
      const decision = await api.post<PolicyDecision>('/admin/provider-access/evaluate', body);
      setAnswer({ decision, toolName: form.toolName });
    });
  };
  const nameOf = (kind: 'user' | 'agent' | 'provider', id: string) =>
    (kind === 'agent'
      ? agents.find((a) => a.id === id)?.name
      : kind === 'provider'
        ? providerOptions.find((p) => p.value === id)?.label
        : undefined) ?? id;
  const explanation = answer ? explainDecision(answer.decision, { toolName: answer.toolName, nameOf }) : null;

  return (
    <section className="card" aria-labelledby="evaluate">
      <h2 id="evaluate">Evaluate a call</h2>
      <p className="hint">A dry run of the policy: which rule would decide this tool call, and what it decides.</p>
      <form onSubmit={submit} className="grid-form" aria-label="Evaluate a call">
        <SelectField
          label="Agent"
          value={agentId}
          onChange={(e) => setForm({ ...form, agentId: e.target.value })}
          options={[...agents.map((a) => ({ value: a.id, label: a.name })), { value: 'none', label: 'No agent' }]}
        />
        <TextField
          label="End user ID (optional)"
          value={form.userId}
          onChange={(e) => setForm({ ...form, userId: e.target.value })}
        />
        <SelectField
          label="Provider"
          value={providerId}
          onChange={(e) => setForm({ ...form, providerId: e.target.value })}
          options={providerOptions}
        />
        <TextField
          label="Tool name"
          required
          value={form.toolName}
          onChange={(e) => setForm({ ...form, toolName: e.target.value })}
        />
        <ErrorNotice error={action.error} title="Could not evaluate" />
        <div className="form-actions">
          <button type="submit" disabled={action.busy || !providerId}>
            Evaluate
          </button>
        </div>
      </form>
      {answer && explanation ? (
        <div className="evaluation" role="status" aria-live="polite">
          <p className={`verdict ${answer.decision.action}`}>
            <strong>{answer.decision.action.replace('_', ' ')}</strong> · risk {answer.decision.risk}
          </p>
          <p data-testid="evaluation-explanation">{explanation.summary}</p>
          <ol className="steps" aria-label="Evaluation order">
            {EVALUATION_STEPS.map((s, i) => (
              <li key={s} className={i === explanation.step ? 'hit' : i < explanation.step ? 'passed' : 'skipped'}>
                {s}
                {i === explanation.step ? <strong> ← decided here</strong> : i < explanation.step ? ' (no match)' : ''}
              </li>
            ))}
          </ol>
        </div>
      ) : null}
    </section>
  );
}
