import { useState, type FormEvent } from 'react';
import { describeError } from '../api.js';
import { AUDIT_STATUSES, type AuditPage, type AuditStats } from '../types.js';
import {
  EMPTY_FILTERS,
  PAGE_SIZE,
  auditFilterQuery,
  auditLogsQuery,
  decidedViaLabel,
  pageSummary,
  type AuditFilters,
} from '../audit-query.js';
import { Empty, ErrorNotice, Loading } from '../components/feedback.js';
import { DataTable } from '../components/data-table.js';
import { SelectField, TextField } from '../components/fields.js';
import { Layout } from '../components/layout.js';
import { StatsChart } from '../components/stats-chart.js';
import {
  canFilterAuditByTenant,
  canFilterAuditByUser,
  canReadIdentityEvents,
  canSeeAuditStats,
} from '../navigation.js';
import { useSession, useUser } from '../session.js';
import { useAgentNames } from '../use-agent-names.js';
import { useAction, useResource } from '../use-resource.js';
import { IdentityEventsSection } from './identity-events.js';

/** An admin's action (`admin:<action>`, @agentgw/audit's ADMIN_ACTION_PREFIX): the user is the admin who acted, no end user. */
const isAdminAction = (toolName: string): boolean => toolName.startsWith('admin:');

/** The audit log: every filter of the query API, paging with the exact total, (admins) the stats and (admins, tenant admins) the identity events. */
export function AuditPageView() {
  const user = useUser();
  const { api } = useSession();
  const exporting = useAction();
  const agentName = useAgentNames();
  const [draft, setDraft] = useState<AuditFilters>(EMPTY_FILTERS);
  const [applied, setApplied] = useState<AuditFilters>(EMPTY_FILTERS);
  const [page, setPage] = useState(0);
  const logs = useResource<AuditPage>(`/audit/logs?${auditLogsQuery(applied, page)}`);
  const filterQuery = auditFilterQuery(applied);
  const stats = useResource<{ data: AuditStats }>(
    canSeeAuditStats(user) ? `/audit/stats${filterQuery ? `?${filterQuery}` : ''}` : null,
  );
  const byUser = canFilterAuditByUser(user);
  const byTenant = canFilterAuditByTenant(user);

  // Fetched (not a plain link) so a refusal is shown in words, then handed to the browser as a file.
  const download = () =>
    void exporting.run(async () => {
      const response = await api.raw(`/audit/export${filterQuery ? `?${filterQuery}` : ''}`, {
        headers: { accept: 'application/x-ndjson' },
      });
      const url = URL.createObjectURL(await response.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = `audit-${new Date().toISOString().slice(0, 10)}.ndjson`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  const set = (patch: Partial<AuditFilters>) => setDraft((d) => ({ ...d, ...patch }));

  const apply = (e: FormEvent) => {
    e.preventDefault();
    setApplied(draft);
    setPage(0);
  };
  const summary = logs.data ? pageSummary(logs.data.pagination, logs.data.data.length) : null;

  return (
    <Layout title="Audit log">
      {canSeeAuditStats(user) ? (
        <section className="card" aria-labelledby="stats">
          <h2 id="stats">Statistics</h2>
          {stats.loading ? <Loading what="statistics" /> : null}
          <ErrorNotice error={stats.error} title="Could not load the statistics" />
          {stats.data ? <StatsChart stats={stats.data.data} /> : null}
        </section>
      ) : (
        <p className="hint">
          You see your own tool calls{user.roles.includes('tenant_admin') ? ' and your tenant’s' : ''}.
        </p>
      )}
      <form className="filters card" aria-label="Filter the audit log" onSubmit={apply}>
        {byUser ? (
          <TextField label="User ID" value={draft.userId} onChange={(e) => set({ userId: e.target.value })} />
        ) : null}
        <TextField label="Agent ID" value={draft.agentId} onChange={(e) => set({ agentId: e.target.value })} />
        {byTenant ? (
          <TextField label="Tenant ID" value={draft.tenantId} onChange={(e) => set({ tenantId: e.target.value })} />
        ) : null}
        <TextField label="Tool name" value={draft.toolName} onChange={(e) => set({ toolName: e.target.value })} />
        <SelectField
          label="Status"
          value={draft.status}
          onChange={(e) => set({ status: e.target.value as AuditFilters['status'] })}
          options={[{ value: '', label: 'Any' }, ...AUDIT_STATUSES.map((s) => ({ value: s, label: s }))]}
        />
        <TextField
          label="From"
          type="date"
          value={draft.startDate}
          onChange={(e) => set({ startDate: e.target.value })}
        />
        <TextField label="To" type="date" value={draft.endDate} onChange={(e) => set({ endDate: e.target.value })} />
        <div className="form-actions">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setDraft(EMPTY_FILTERS);
              setApplied(EMPTY_FILTERS);
              setPage(0);
            }}
          >
            Clear
          </button>
          <button type="button" className="secondary" onClick={logs.reload}>
            Refresh
          </button>
          <button type="button" className="secondary" disabled={exporting.busy} onClick={download}>
            {exporting.busy ? 'Exporting…' : 'Export (NDJSON)'}
          </button>
        </div>
        {exporting.error ? (
          <p className="notice notice-error" role="alert">
            Export failed: {describeError(exporting.error)}
          </p>
        ) : null}
      </form>
      <section aria-labelledby="entries">
        <h2 id="entries">Entries</h2>
        {logs.loading ? <Loading what="audit entries" /> : null}
        <ErrorNotice error={logs.error} title="Could not load the audit log" />
        {logs.data && logs.data.data.length === 0 ? (
          <Empty>No entries match (total {logs.data.pagination.total}).</Empty>
        ) : null}
        {logs.data && logs.data.data.length > 0 ? (
          <DataTable
            caption="Audit entries"
            columns={['When', 'Tool', 'Status', 'Agent', 'End user', 'Duration', 'Details']}
          >
            {logs.data.data.map((e) => (
              <tr key={e.id} data-testid="audit-row">
                <td data-label="When">{new Date(e.createdAt).toLocaleString()}</td>
                <td data-label="Tool" className="mono">
                  {e.toolName}
                </td>
                <td data-label="Status">
                  <span className={`status audit-${e.status}`}>{e.status}</span>
                  {e.decidedVia ? <div className="small">{decidedViaLabel(e.decidedVia)}</div> : null}
                </td>
                <td data-label="Agent" className="mono small">
                  {agentName(e.agentId) ?? '—'}
                </td>
                <td data-label="End user" className="mono small">
                  {isAdminAction(e.toolName) ? `admin ${e.userId ?? '?'}` : (e.endUserId ?? e.userId ?? '—')}
                </td>
                <td data-label="Duration">
                  {e.duration === null || e.duration === undefined ? '—' : `${e.duration} ms`}
                </td>
                <td data-label="Details">
                  <details>
                    <summary>Arguments and result</summary>
                    <pre className="json">
                      {JSON.stringify(
                        {
                          arguments: e.arguments,
                          result: e.result,
                          error: e.error ?? null,
                          confirmedBy: e.confirmedBy,
                          decidedVia: e.decidedVia,
                          providerId: e.providerId,
                        },
                        null,
                        2,
                      )}
                    </pre>
                  </details>
                </td>
              </tr>
            ))}
          </DataTable>
        ) : null}
        {summary ? (
          <nav className="pager" aria-label="Audit pages">
            <button
              type="button"
              className="secondary"
              disabled={!summary.hasPrevious}
              onClick={() => setPage((p) => Math.max(0, p - 1))}
            >
              Previous {PAGE_SIZE}
            </button>
            <span role="status" data-testid="audit-total">
              {summary.text}
            </span>
            <button
              type="button"
              className="secondary"
              disabled={!summary.hasNext}
              onClick={() => setPage((p) => p + 1)}
            >
              Next {PAGE_SIZE}
            </button>
          </nav>
        ) : null}
      </section>
      {canReadIdentityEvents(user) ? <IdentityEventsSection /> : null}
    </Layout>
  );
}
