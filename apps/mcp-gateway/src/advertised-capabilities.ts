import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import type { McpUpstreamClient, UpstreamTarget } from '@agentgw/mcp-client';
import { addressedProvider } from './addressed-provider.js';
import { SKILLS_EXTENSION, TASKS_EXTENSION } from './extensions/extension-ids.js';
import type { McpEndpoint } from './mcp-context.js';
import { mayReach, routingSet, type ToolCallCatalog } from './tool-call/tool-access.js';

type Capabilities = Record<string, unknown>;

/** How long an `initialize` or `server/discover` waits for an upstream's own set before assuming it offers everything. */
export const UPSTREAM_CAPABILITIES_TIMEOUT_MS = 3_000;

/**
 * What the gateway answers itself whatever its upstreams offer: the tool list (merged, filtered
 * and changed by its own rules, hence `listChanged`), the log level (OwnedMethods answers
 * `logging/setLevel` where an upstream has no logging) and the extensions it implements.
 */
const GATEWAY_OWN: Readonly<Capabilities> = Object.freeze({
  tools: { listChanged: true },
  logging: {},
  extensions: { [TASKS_EXTENSION]: {}, [SKILLS_EXTENSION]: {} },
});

/** What an upstream that could not be asked is assumed to offer: every feature the gateway can route. */
const ASSUMED_OFFER: Readonly<Capabilities> = Object.freeze({
  resources: { subscribe: true },
  prompts: {},
  completions: {},
});

/**
 * The capabilities advertised for a set of upstreams (one on the proxy, the caller's on the
 * unified endpoint): the gateway's own plus each feature some upstream offers — resources (with
 * `subscribe` when one subscribes), prompts, completions — list changes announced by the gateway
 * (its provider and rule changes change every list). An unknown offer (null) counts as everything.
 */
export function advertisedCapabilities(offers: readonly (Readonly<Capabilities> | null)[]): Capabilities {
  const known = offers.map((offer) => offer ?? ASSUMED_OFFER);
  const some = (feature: string) => known.some((offer) => isObject(offer[feature]));
  const subscribes = known.some((offer) => isObject(offer.resources) && offer.resources.subscribe === true);
  return {
    ...GATEWAY_OWN,
    ...(some('resources') ? { resources: { listChanged: true, ...(subscribes ? { subscribe: true } : {}) } } : {}),
    ...(some('prompts') ? { prompts: { listChanged: true } } : {}),
    ...(some('completions') ? { completions: {} } : {}),
  };
}

/** What advertising for a caller needs: the catalog, the upstream client, and the caller's target of a provider (rejects when they have none). */
export interface CapabilitySources {
  catalog: ToolCallCatalog;
  client: Pick<McpUpstreamClient, 'serverCapabilities'>;
  targetOf(provider: ProviderRecord): Promise<UpstreamTarget>;
}

/**
 * The capabilities one caller is shown on an endpoint: the proxy's provider's offer, or the union
 * over the providers they may reach on the unified endpoint, each asked as the caller (within
 * UPSTREAM_CAPABILITIES_TIMEOUT_MS; a provider that cannot be asked counts as offering everything).
 */
export async function capabilitiesFor(
  sources: CapabilitySources,
  principal: Principal,
  endpoint: McpEndpoint,
): Promise<Capabilities> {
  const providers =
    endpoint.kind === 'proxy'
      ? [await addressedProvider(sources.catalog.providers, principal, endpoint.providerId)]
      : await reachableProviders(sources.catalog, principal, endpoint.providerFilter);
  const offers = await Promise.all(
    providers.map((provider) =>
      sources
        .targetOf(provider)
        .then((target) => sources.client.serverCapabilities(target, { timeoutMs: UPSTREAM_CAPABILITIES_TIMEOUT_MS }))
        .catch(() => null),
    ),
  );
  return advertisedCapabilities(offers);
}

async function reachableProviders(
  catalog: ToolCallCatalog,
  principal: Principal,
  filter: readonly string[] | null,
): Promise<ProviderRecord[]> {
  const providers = await routingSet(catalog, principal, filter);
  const allowed = await Promise.all(providers.map((p) => mayReach(catalog, principal, p.id)));
  return providers.filter((_, i) => allowed[i]);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
