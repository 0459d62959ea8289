import type { AuditEntry, AuditStatus } from './types.js';

/** The audit page's filters, one per query parameter of `GET /audit/logs`. */
export interface AuditFilters {
  userId: string;
  agentId: string;
  tenantId: string;
  toolName: string;
  status: AuditStatus | '';
  /** `YYYY-MM-DD` from a date input; sent as the start of that day (UTC). */
  startDate: string;
  /** `YYYY-MM-DD`; sent as the end of that day (UTC), so the day itself is included. */
  endDate: string;
}

export const EMPTY_FILTERS: AuditFilters = {
  userId: '',
  agentId: '',
  tenantId: '',
  toolName: '',
  status: '',
  startDate: '',
  endDate: '',
};

export const PAGE_SIZE = 25;

/** The filter parameters shared by logs, stats and export; empty filters are left out. */
export function auditFilterQuery(filters: AuditFilters): string {
  return filterParams(filters).toString();
}

/** The query string for one page of logs. */
export function auditLogsQuery(filters: AuditFilters, page: number, pageSize = PAGE_SIZE): string {
  const params = filterParams(filters);
  params.set('limit', String(pageSize));
  params.set('offset', String(Math.max(0, page) * pageSize));
  return params.toString();
}

function filterParams(filters: AuditFilters): URLSearchParams {
  const params = new URLSearchParams();
  const add = (name: string, value: string) => {
    if (value.trim()) params.set(name, value.trim());
  };
  add('user_id', filters.userId);
  add('agent_id', filters.agentId);
  add('tenant_id', filters.tenantId);
  add('tool_name', filters.toolName);
  add('status', filters.status);
  if (filters.startDate) add('start_date', `${filters.startDate}T00:00:00.000Z`);
  if (filters.endDate) add('end_date', `${filters.endDate}T23:59:59.999Z`);
  return params;
}

/** "Showing 26–50 of 120" and whether there are earlier/later pages, from the exact total. */
export function pageSummary(
  pagination: { limit: number; offset: number; total: number },
  shown: number,
): { text: string; hasPrevious: boolean; hasNext: boolean } {
  const { offset, total } = pagination;
  const text =
    total === 0 || shown === 0 ? `No entries (total ${total})` : `Showing ${offset + 1}–${offset + shown} of ${total}`;
  return { text, hasPrevious: offset > 0, hasNext: offset + shown < total };
}

/** How a held call was decided, as the Status column shows it under the status: the carrier, and the person's OAuth client when they answered in it; null when nobody decided. */
export function decidedViaLabel(decidedVia: AuditEntry['decidedVia']): string | null {
  if (decidedVia === null) return null;
  switch (decidedVia.carrier) {
    case 'console':
      return 'decided on the console';
    case 'push':
      return 'decided by push';
    case 'client':
      return decidedVia.clientId === null
        ? 'decided in the MCP client'
        : `decided in the MCP client ${decidedVia.clientId}`;
  }
}
