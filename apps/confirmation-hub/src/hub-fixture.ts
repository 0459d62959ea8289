import { createConfirmationGate, type ConfirmationGateHandle } from '@agentgw/confirmations';
import type { HeldCall, HoldOutcome } from '@agentgw/core';
import type { RoleName } from '@agentgw/db';
import type { TestBackend } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { createUser, tokenFor } from '@agentgw/testkit';
import { vi } from 'vitest';
import { confirmationHubService } from './service.js';

export type Caller = { id: string; token: string };

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
  /** Holds a call for alice (made by bob, tenant acme) and waits until it is stored. */
  hold(overrides?: Partial<HeldCall>, signal?: AbortSignal): Promise<{ id: string; outcome: Promise<HoldOutcome> }>;
  close(): Promise<void>;
}

let sequence = 0;

/** The hub on fresh deps, a gate on the same deps, and the usual cast of callers. */
export async function openHub(options: { backend?: TestBackend; env?: Record<string, string> } = {}): Promise<HubFixture> {
  const deps = await createTestDeps({ backend: options.backend, env: options.env });
  const caller = async (roles: RoleName[], tenantId: string | null): Promise<Caller> => {
    sequence += 1;
    const user = await createUser(deps, { email: `hub-${sequence}-${Date.now()}@example.test`, roles, tenantId });
    return { id: user.id, token: await tokenFor(deps, user) };
  };
  const host = await testHost(confirmationHubService, deps);
  const gate = createConfirmationGate(deps, { timeoutMs: deps.config.CONFIRMATION_TIMEOUT_MS, statusIntervalMs: 60_000 });
  const [alice, bob, carol, acmeAdmin, globexAdmin, admin] = [
    await caller([], 'acme'),
    await caller([], 'acme'),
    await caller([], 'acme'),
    await caller(['tenant_admin'], 'acme'),
    await caller(['tenant_admin'], 'globex'),
    await caller(['admin'], null),
  ];
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
    async hold(overrides = {}, signal = new AbortController().signal) {
      const call: HeldCall = {
        auditId: `audit-${++sequence}`,
        agentId: 'agent-1',
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
