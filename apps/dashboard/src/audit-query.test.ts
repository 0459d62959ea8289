import { describe, expect, it } from 'vitest';
import { EMPTY_FILTERS, auditFilterQuery, auditLogsQuery, decidedViaLabel, pageSummary } from './audit-query.js';

describe('auditLogsQuery', () => {
  it('sends every filter under the spec names with whole-day dates, and pages by offset', () => {
    const q = new URLSearchParams(
      auditLogsQuery(
        {
          userId: 'u1',
          agentId: 'a1',
          tenantId: 't1',
          toolName: ' echo ',
          status: 'completed',
          startDate: '2026-11-01',
          endDate: '2026-11-02',
        },
        2,
        10,
      ),
    );
    expect(Object.fromEntries(q)).toEqual({
      user_id: 'u1',
      agent_id: 'a1',
      tenant_id: 't1',
      tool_name: 'echo',
      status: 'completed',
      start_date: '2026-11-01T00:00:00.000Z',
      end_date: '2026-11-02T23:59:59.999Z',
      limit: '10',
      offset: '20',
    });
  });

  it('leaves empty filters out, and the stats/export query has no paging', () => {
    expect(auditLogsQuery(EMPTY_FILTERS, 0)).toBe('limit=25&offset=0');
    expect(auditFilterQuery(EMPTY_FILTERS)).toBe('');
    expect(auditFilterQuery({ ...EMPTY_FILTERS, status: 'failed' })).toBe('status=failed');
  });
});

describe('pageSummary', () => {
  it('reports the exact total and the neighbouring pages', () => {
    expect(pageSummary({ limit: 25, offset: 25, total: 60 }, 25)).toEqual({
      text: 'Showing 26–50 of 60',
      hasPrevious: true,
      hasNext: true,
    });
    expect(pageSummary({ limit: 25, offset: 50, total: 60 }, 10)).toEqual({
      text: 'Showing 51–60 of 60',
      hasPrevious: true,
      hasNext: false,
    });
    expect(pageSummary({ limit: 25, offset: 0, total: 0 }, 0)).toEqual({
      text: 'No entries (total 0)',
      hasPrevious: false,
      hasNext: false,
    });
  });
});

describe('decidedViaLabel', () => {
  it('names the carrier, and the OAuth client a person answered from', () => {
    expect(decidedViaLabel(null)).toBeNull();
    expect(decidedViaLabel({ carrier: 'console', clientId: null })).toBe('decided on the console');
    expect(decidedViaLabel({ carrier: 'push', clientId: null })).toBe('decided by push');
    expect(decidedViaLabel({ carrier: 'client', clientId: 'mcp-app-1' })).toBe('decided in the MCP client mcp-app-1');
    expect(decidedViaLabel({ carrier: 'client', clientId: null })).toBe('decided in the MCP client');
  });
});
