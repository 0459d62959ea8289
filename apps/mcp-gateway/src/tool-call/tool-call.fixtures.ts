import type { AuditOpenEntry, AuditPatch, AuditTrail, OpenTiming } from '@agentgw/audit';
import type { OAuthPrincipal, RuntimeTokenPrincipal, SessionTokenPrincipal, UserJwtPrincipal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import {
  NotFoundError,
  type ConfirmationCarrier,
  type ConfirmationGate,
  type HeldCall,
  type HoldOptions,
  type HoldOutcome,
  type Logger,
  type PolicyAction,
  type RiskLevel,
} from '@agentgw/core';
import { vi } from 'vitest';
import type { ToolCallCatalog } from './tool-access.js';

// In-memory fakes for the tool-call use case's unit tests: no database, queue or HTTP.

/** A logger whose `error` calls the test can count. */
export function spyLogger(): Logger & { error: ReturnType<typeof vi.fn> } {
  const noop = () => undefined;
  return {
    error: vi.fn(),
    warn: noop,
    info: noop,
    debug: noop,
    trace: noop,
    fatal: noop,
    child: () => spyLogger(),
  } as unknown as Logger & { error: ReturnType<typeof vi.fn> };
}

/** A principal acting as `agentId` for `userId` (tenant t1), as a session token brings one. */
export function principalOf(over: Partial<Omit<SessionTokenPrincipal, 'via'>> = {}): SessionTokenPrincipal {
  return {
    via: 'session_token',
    userId: 'u1',
    email: null,
    roles: [],
    tenantId: 't1',
    agentId: 'a1',
    endUserId: 'e1',
    apiKey: null,
    permissions: new Set(),
    ...over,
  };
}

/** A person signed in with their own JWT (user u1, tenant t1): no agent. */
export function personOf(): UserJwtPrincipal {
  return {
    via: 'jwt',
    userId: 'u1',
    email: null,
    roles: [],
    tenantId: 't1',
    agentId: null,
    endUserId: 'u1',
    apiKey: null,
    permissions: new Set(),
  };
}

/** A person signed in through the gateway's OAuth in MCP client `client-1` (user u1, tenant t1), acting for themselves. */
export function oauthPersonOf(): OAuthPrincipal {
  return {
    via: 'oauth',
    userId: 'u1',
    email: null,
    roles: [],
    tenantId: 't1',
    agentId: null,
    endUserId: 'u1',
    apiKey: null,
    permissions: new Set(),
    oauth: { clientId: 'client-1', audience: 'https://gw.test/api/v1/mcp/mcp', scopes: ['mcp'], grantId: 'g1' },
  };
}

/** An agent's runtime token alone (agent a1, tenant t1): no user. */
export function bareAgentOf(): RuntimeTokenPrincipal {
  return {
    via: 'runtime_token',
    userId: null,
    email: null,
    roles: [],
    tenantId: 't1',
    agentId: 'a1',
    endUserId: null,
    apiKey: null,
    permissions: new Set(),
  };
}

/** A provider record owning `pattern`. */
export function providerOf(id: string, pattern: string, priority = 0): ProviderRecord {
  return {
    id,
    name: id,
    pattern,
    endpoint: `http://127.0.0.1:9/${id}`,
    authType: 'none',
    credentialServiceType: null,
    tokenExchange: null,
    priority,
    description: null,
    namePrefix: null,
    tenantId: null,
    authSecretSealed: null,
  };
}

/** A catalog the test edits directly: providers in routing order, agents, provider access and per-tool policy. */
export class FakeCatalog implements ToolCallCatalog {
  providerList: ProviderRecord[] = [];
  agentStates = new Map<string, { isActive: boolean; requireConfirmation: boolean }>();
  /** `${agentId}:${providerId}` pairs with provider-level access. */
  reach = new Set<string>();
  /** Tool name → decision (`carriers`: the matched rule's confirmCarriers); anything else is denied by default (no rule matched). */
  policy = new Map<
    string,
    { action: PolicyAction; risk: RiskLevel; rule: boolean; carriers?: ConfirmationCarrier[] }
  >();
  readonly reads: string[] = [];

  agents: ToolCallCatalog['agents'] = {
    get: async (id) => {
      const state = this.agentStates.get(id);
      return state ? ({ id, ...state } as Awaited<ReturnType<ToolCallCatalog['agents']['get']>>) : null;
    },
  };

  providers: ToolCallCatalog['providers'] = {
    routableFor: async () => this.providerList,
    visibleTo: async () => this.providerList,
    getFor: async (_principal, id) => {
      const found = this.providerList.find((p) => p.id === id);
      if (!found) throw new NotFoundError('Tool provider');
      return found;
    },
  };

  rules: ToolCallCatalog['rules'] = {
    providerAllowed: async ({ agentId, providerId }) => {
      this.reads.push(`reach ${providerId}`);
      return this.reach.has(`${agentId}:${providerId}`);
    },
    decide: async ({ toolName }) => {
      this.reads.push(`policy ${toolName}`);
      const set = this.policy.get(toolName);
      if (!set) return { action: 'deny', risk: 'high', matchedRule: null };
      const matchedRule = set.rule ? ({ id: 'r1', confirmCarriers: set.carriers ?? null } as never) : null;
      return { action: set.action, risk: set.risk, matchedRule };
    },
  };
}

/** Every job the use case asked the trail for, in order. */
export type TrailJob = ({ op: 'open' } & AuditOpenEntry) | ({ op: 'update'; id: string } & AuditPatch);

/** An audit trail that remembers its jobs (and can be made to fail, as a queue outage). */
export function recordingTrail(): AuditTrail & { jobs: TrailJob[]; timings: OpenTiming[]; failing: boolean } {
  const trail = {
    jobs: [] as TrailJob[],
    /** When each open asked its create to leave (see OpenTiming). */
    timings: [] as OpenTiming[],
    failing: false,
    async open(entry: AuditOpenEntry, timing: OpenTiming = 'now') {
      if (trail.failing) throw new Error('queue down');
      trail.jobs.push({ op: 'open', ...entry });
      trail.timings.push(timing);
      return entry.id ?? '';
    },
    async update(id: string, patch: AuditPatch) {
      if (trail.failing) throw new Error('queue down');
      trail.jobs.push({ op: 'update', id, ...patch });
    },
  };
  return trail;
}

/** A confirmation gate answering every hold with `outcome` (after one status, as the hub's gate reports the stored confirmation) and redeeming only `token`. */
export function scriptedGate(
  outcome: HoldOutcome,
  token = 'good-token',
): ConfirmationGate & { held: HeldCall[]; redeemed: HeldCall[] } {
  const gate = {
    held: [] as HeldCall[],
    redeemed: [] as HeldCall[],
    async hold(call: HeldCall, options: HoldOptions) {
      gate.held.push(call);
      options.onStatus?.({ confirmationId: outcome.confirmationId, message: 'Waiting for confirmation', elapsedMs: 0 });
      return outcome;
    },
    async redeem(given: string, call: HeldCall) {
      if (given !== token) return false;
      gate.redeemed.push(call);
      return true;
    },
  };
  return gate;
}
