import type { Env, Hono, Schema } from 'hono';
import type { ServiceDeps } from './deps.js';

/**
 * A service as its host sees it: the routes, plus whatever runs beside them. The host (a
 * service's own main.ts, or the all-in-one) adds the shell once — request id, body limit,
 * error handler, `/health` — so `routes` carries none of it.
 */
export interface ServiceRuntime {
  /**
   * The service's routes only: no listening, no request-id/error/health layer of its own. A
   * plain Hono or an OpenAPIHono from `openApiApp()` (whose documented routes join the host's
   * OpenAPI document).
   */
  routes: Hono<Env, Schema, string>;
  /** Starts queue consumers, bus subscriptions and timers. Called once, before the host listens. */
  start?(): Promise<void>;
  /**
   * The first step of a shutdown, run for every runtime of the host before any `stop`: answer
   * what clients still wait for and record how it ended (mcp-gateway: open MCP requests, held
   * calls), while the other services (the audit writer's consumer) still run. Within `deadlineMs`.
   */
  settle?(options: { deadlineMs: number }): Promise<void>;
  /**
   * Stops them and ends open streams (SSE, held calls) within `deadlineMs`. Called once on
   * shutdown, after the listener stops accepting and before the deps are closed.
   */
  stop?(options: { deadlineMs: number }): Promise<void>;
}

/** One deployable service: a name, a default port and a factory for its runtime. */
export interface ServiceDefinition {
  name: string;
  defaultPort: number;
  /**
   * Literal path prefixes that carry the service's per-call traffic (its MCP endpoint, invoke).
   * The host matches them on a router of their own, kept small enough for Hono's fastest router
   * whatever else the process mounts (see `LaneRouter`).
   */
  hotPaths?: readonly string[];
  /** Builds the runtime from the shared deps; side effects wait for `start()`. */
  create(deps: ServiceDeps): ServiceRuntime | Promise<ServiceRuntime>;
}

/** Identity function that checks a service definition's shape at the definition site. */
export function defineService(definition: ServiceDefinition): ServiceDefinition {
  return definition;
}
