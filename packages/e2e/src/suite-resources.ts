import type { Json } from './gateway-api.js';
import type { SuiteContext } from './suite.js';

/** An agent's id and its one-time runtime token. */
export type SuiteAgent = { id: string; token: string };

/**
 * Providers and agents a later suite adds to the running target through the admin API, each
 * removed again by `cleanup()`, so the tests that run afterwards (the fault runs) see none of them.
 */
export class SuiteResources {
  private readonly undo: (() => Promise<unknown>)[] = [];

  constructor(private readonly c: SuiteContext) {}

  /** An admin call that must answer `expected`. */
  admin<T = Json>(expected: number, method: string, path: string, body?: unknown): Promise<T> {
    return this.c.api.must(expected, method, path, { token: this.c.adminToken, body });
  }

  /** A global tool provider (deleted on cleanup); its id. */
  async provider(body: Record<string, unknown>): Promise<string> {
    const id = (await this.admin(201, 'POST', '/api/v1/admin/tool-providers', body)).provider.id as string;
    this.undo.push(() => this.c.api.delete(`/api/v1/admin/tool-providers/${id}`, { token: this.c.adminToken }));
    return id;
  }

  /** A global agent (deleted on cleanup) allowed on each of `providerIds`. */
  async agent(name: string, providerIds: string[], extra: Record<string, unknown> = {}): Promise<SuiteAgent> {
    const created = await this.admin(201, 'POST', '/api/v1/admin/agents', {
      name: `${name}-${Date.now()}`,
      upstreamUrl: 'http://127.0.0.1:9/agent',
      ...extra,
    });
    const agent = { id: created.agent.id as string, token: created.runtime_token as string };
    this.undo.push(() => this.c.api.delete(`/api/v1/admin/agents/${agent.id}`, { token: this.c.adminToken }));
    for (const providerId of providerIds) await this.allow(agent, providerId);
    return agent;
  }

  /** An access rule for `agent` on one provider (`toolPattern` defaults to every tool). */
  async allow(
    agent: SuiteAgent,
    providerId: string,
    action: 'allow' | 'deny' = 'allow',
    toolPattern = '*',
  ): Promise<void> {
    await this.admin(201, 'POST', '/api/v1/admin/provider-access', {
      subjectType: 'agent',
      subjectId: agent.id,
      providerId,
      action,
      toolPattern,
    });
  }

  /** Deletes what was made, newest first; a failure leaves the rest to go on. */
  async cleanup(): Promise<void> {
    for (const step of this.undo.reverse()) await step().catch(() => undefined);
    this.undo.length = 0;
  }
}
