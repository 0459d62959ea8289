import { describe, expect, expectTypeOf, it } from 'vitest';
import { auditRecordJobSchema, type jobCatalog } from './job-catalog.js';
import type { AuditRecordJob, GatewayJobs } from './jobs.js';
import type { JobQueue } from './queue/index.js';

const create = {
  op: 'create',
  id: 'a1',
  key: 'c:a1',
  seq: 1,
  at: '2026-01-01T00:00:00.000Z',
  userId: 'u1',
  agentId: null,
  endUserId: null,
  providerId: 'p1',
  tenantId: null,
  toolName: 'fs.read',
  arguments: { path: '/x' },
  status: 'pending',
} as const satisfies AuditRecordJob;

// Compile-time contract: `tsc -p tsconfig.json` (the package's typecheck) checks this file, and
// every `@ts-expect-error` below fails the typecheck if the line it covers starts compiling.
function typeContract(queue: JobQueue): void {
  const { toolName: _toolName, ...withoutToolName } = create;
  // @ts-expect-error a create without a tool name is not an audit record job
  void queue.enqueue('audit-bulk', { records: [withoutToolName] });
  const update = { op: 'update', id: 'a1', key: 'u:1', seq: 2, at: create.at, status: 'completed' } as const;
  // @ts-expect-error an update carries a patch, not the create's fields
  void queue.enqueue('audit-bulk', { records: [update] });
  // @ts-expect-error the single-record `audit` queue is gone
  void queue.enqueue('audit', create);
  // @ts-expect-error an unknown status
  void queue.enqueue('audit-bulk', { records: [{ ...create, status: 'exploded' }] });
  void queue.enqueue('audit-bulk', {
    records: [
      create,
      { op: 'update', id: 'a1', key: 'u:1', seq: 2, at: create.at, patch: { status: 'completed', duration: 5 } },
    ],
  });
}

describe('job catalog', () => {
  it('derives GatewayJobs from the schemas', () => {
    expectTypeOf(typeContract).toBeFunction();
    expectTypeOf<GatewayJobs['audit-bulk']['records'][number]>().toEqualTypeOf<AuditRecordJob>();
    expectTypeOf<Extract<AuditRecordJob, { op: 'create' }>['toolName']>().toEqualTypeOf<string>();
    expectTypeOf<GatewayJobs['confirmation-timeout']>().toEqualTypeOf<{ confirmationId: string }>();
    expectTypeOf<keyof GatewayJobs>().toEqualTypeOf<keyof typeof jobCatalog>();
  });

  it('parses a create and an update, and names what is wrong with a bad one', () => {
    expect(auditRecordJobSchema.parse(create)).toEqual(create);
    const update = {
      op: 'update',
      id: 'a1',
      key: 'u:1',
      seq: 2,
      at: create.at,
      patch: { status: 'completed', result: { ok: true } },
    };
    expect(auditRecordJobSchema.parse(update)).toEqual(update);
    const problem = (job: unknown) => auditRecordJobSchema.safeParse(job).error?.issues[0];
    const { toolName: _toolName, ...withoutToolName } = create;
    expect(problem(withoutToolName)).toMatchObject({ path: ['toolName'], message: 'must be a string' });
    expect(problem({ ...create, status: 'exploded' })).toMatchObject({
      path: ['status'],
      message: 'must be a known status',
    });
    expect(problem({ ...create, op: 'delete' })).toMatchObject({ path: ['op'], message: 'must be create or update' });
    expect(problem({ ...create, at: 'yesterday' })).toMatchObject({
      path: ['at'],
      message: 'must be an ISO date-time',
    });
    expect(problem({ ...update, patch: { duration: -1 } })).toMatchObject({
      path: ['patch', 'duration'],
      message: 'must be an integer from 0 to 2147483647',
    });
  });
});
