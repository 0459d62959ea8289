import { generateRuntimeToken } from '@agentgw/auth';
import { createConfirmationGate, maxPendingOf, type ConfirmationGateHandle } from '@agentgw/confirmations';
import { newId, type HeldCall, type HoldOutcome } from '@agentgw/core';
import type { Database, RoleName } from '@agentgw/db';
import type { TestBackend } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { createUser, tokenFor } from '@agentgw/testkit';
import type { Kysely } from 'kysely';
import { vi } from 'vitest';
import { confirmationHubService } from './service.js';

export type Caller = { id: string; token: string };

/** Stores an enabled agent (the held calls' maker) and returns its id and runtime token. */
export async function insertAgent(
  db: Kysely<Database>,
  values: { id?: string; tenantId: string | null; ownerId: string | null },
): Promise<{ id: string; runtimeToken: string }> {
  const runtime = generateRuntimeToken();
  const id = values.id ?? newId();
  await db
    .insertInto('agents')
    .values({
      id,
      name: `agent-${id}`,
      description: null,
      upstream_url: 'http://127.0.0.1:9/agent',
      upstream_secret_enc: null,
      required_credentials: JSON.stringify([]),
      tenant_id: values.tenantId,
      owner_id: values.ownerId,
      runtime_token_hash: runtime.hash,
      runtime_token_prefix: runtime.prefix,
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  return { id, runtimeToken: runtime.token };
}

export interface HubFixture {
  deps: TestDeps;
  host: TestHost;
  gate: ConfirmationGateHandle;
  /** The end user calls are made for (and the confirmer). */
  alice: Caller;
  /** The user whose call is held (e.g. the agent's owner). */
  bob: Caller;
  /** Same tenant, no part in the call. */
  carol: Caller;
  acmeAdmin: Caller;
  globexAdmin: Caller;
  admin: Caller;
  /** The enabled agent the held calls come from (owned by bob, tenant acme). */
  agentId: string;
  /** Holds a call for alice (made by bob through the agent, tenant acme) and waits until it is stored. */
  hold(overrides?: Partial<HeldCall>, signal?: AbortSignal): Promise<{ id: string; outcome: Promise<HoldOutcome> }>;
  close(): Promise<void>;
}

let sequence = 0;

/** The hub on fresh deps, a gate on the same deps, and the usual cast of callers. */
export async function startHubUnderTest(
  options: { backend?: TestBackend; env?: Record<string, string> } = {},
): Promise<HubFixture> {
  const deps = await createTestDeps({ backend: options.backend, env: options.env });
  const caller = async (roles: RoleName[], tenantId: string | null): Promise<Caller> => {
    sequence += 1;
    const user = await createUser(deps, { email: `hub-${sequence}-${Date.now()}@example.test`, roles, tenantId });
    return { id: user.id, token: await tokenFor(deps, user) };
  };
  const host = await testHost(confirmationHubService, deps);
  const gate = createConfirmationGate(deps, {
    timeoutMs: deps.config.CONFIRMATION_TIMEOUT_MS,
    statusIntervalMs: 60_000,
    maxPending: maxPendingOf(deps.config),
  });
  const [alice, bob, carol, acmeAdmin, globexAdmin, admin] = [
    await caller([], 'acme'),
    await caller([], 'acme'),
    await caller([], 'acme'),
    await caller(['tenant_admin'], 'acme'),
    await caller(['tenant_admin'], 'globex'),
    await caller(['admin'], null),
  ];
  const { id: agentId } = await insertAgent(deps.db, { tenantId: 'acme', ownerId: bob.id });
  return {
    deps,
    host,
    gate,
    alice,
    bob,
    carol,
    acmeAdmin,
    globexAdmin,
    admin,
    agentId,
    async hold(overrides = {}, signal = new AbortController().signal) {
      const call: HeldCall = {
        auditId: `audit-${++sequence}`,
        agentId,
        userId: bob.id,
        endUserId: alice.id,
        tenantId: 'acme',
        providerId: 'github',
        toolName: 'delete_repo',
        arguments: { repo: 'acme/site', n: sequence },
        risk: 'high',
        ...overrides,
      };
      const outcome = gate.hold(call, { signal });
      outcome.catch(() => undefined);
      const id = await vi.waitFor(async () => {
        const row = await deps.db
          .selectFrom('confirmations')
          .select('id')
          .where('audit_id', '=', call.auditId)
          .executeTakeFirst();
        if (!row) throw new Error('not stored yet');
        return row.id;
      });
      return { id, outcome };
    },
    async close() {
      await gate.close();
      await host.stop({ deadlineMs: 2_000 });
      await deps.close();
    },
  };
}
