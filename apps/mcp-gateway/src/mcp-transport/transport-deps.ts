import type { AuthService } from '@agentgw/auth';
import type { Catalog } from '@agentgw/catalog';
import type { CallQuota, Clock, EventBus, Logger } from '@agentgw/core';
import type { McpUpstreamClient } from '@agentgw/mcp-client';
import type { McpMethodRouter } from '../mcp-method-router.js';
import type { OriginPolicy } from '../origins.js';
import type { ProtectedResources } from '../protected-resource/protected-resource.js';
import type { ServerRequestRelay } from '../relay/server-request-relay.js';
import type { SessionIdCodec } from '../session-ids.js';
import type { SessionStore } from '../session-store.js';
import type { ResumptionStore } from '../stream-resumption/resumption-store.js';
import type { RequestTargets } from '../upstream-auth/request-targets.js';
import type { OpenRequests } from './open-requests.js';

/** What the MCP transport needs beside the method router: auth, sessions, Origin policy, the bus for server streams. */
export interface McpTransportDeps {
  auth: AuthService;
  catalog: Catalog;
  client: McpUpstreamClient;
  router: McpMethodRouter;
  sessions: SessionStore;
  codec: SessionIdCodec;
  origins: OriginPolicy;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  /** Open server streams (GET), ended on shutdown. */
  streams: Set<() => void>;
  /** Per-agent and per-tenant call quotas (shared with invoke). */
  quota: CallQuota;
  /** Routes a client's answers to relayed server requests back to their upstreams. */
  relay: ServerRequestRelay;
  /** The endpoints as OAuth protected resources: token audiences and 401 challenges. */
  resources: ProtectedResources;
  /** Paused answer streams' events, for resumes with Last-Event-ID (stream-resumption/). */
  resumption: ResumptionStore;
  /** Builds a request's upstream target as its caller: a session's per-user upstream sessions are ended as the user ending it. */
  targets: Pick<RequestTargets, 'forRequest'>;
  /** The keep-alive comment interval of a `subscriptions/listen` stream (SSE_HEARTBEAT_MS). */
  listenHeartbeatMs: number;
  /** The requests being answered on this replica: a shutdown answers each (open-requests.ts). */
  open: OpenRequests;
}
