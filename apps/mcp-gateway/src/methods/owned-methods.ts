import type { ProviderRecord } from '@agentgw/catalog';
import { JSON_RPC } from '@agentgw/mcp-client';
import type { McpRequestContext } from '../mcp-context.js';
import type { ListItem, ListKind } from '../provider-view/list-items.js';
import { GATEWAY_RPC, invalidParams, RpcError } from '../rpc-errors.js';
import { matchesTemplate } from './uri-templates.js';

type Result = Record<string, unknown>;

/** What routing a method to its provider needs from the MCP methods (mcp-methods.ts): the caller's reachable providers, their lists, and forwarding. */
export interface ProviderAccess {
  /** The providers the caller may reach on this endpoint, in routing order. */
  reachable(ctx: McpRequestContext): Promise<ProviderRecord[]>;
  /** A provider's cached list of one kind (empty when it has none or could not be asked). */
  list(provider: ProviderRecord, kind: ListKind, ctx: McpRequestContext): Promise<ListItem[]>;
  /** Sends a request to a provider for the caller (its upstream JSON-RPC error is passed on as it is). */
  forward(provider: ProviderRecord, method: string, params: Result, ctx: McpRequestContext): Promise<Result>;
  /** Before "not found": throws the connect refusal of a per-user provider that lists nothing for the caller until they connect (the name may be its). */
  connectFirst(ctx: McpRequestContext): Promise<void>;
}

/** Methods of the unified endpoint answered by routing, beyond tools and the merged lists (README: "Routing of the other methods"). */
export const OWNED_METHODS: ReadonlySet<string> = new Set([
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
]);

/**
 * The unified endpoint's methods that belong to one provider (or to all): a resource by its uri
 * (listed, else a template it matches), a completion by its reference (a prompt by name, a
 * template by its uriTemplate), subscriptions on the resource's owner, and `logging/setLevel`
 * to every reachable provider.
 */
export class OwnedMethods {
  constructor(private readonly access: ProviderAccess) {}

  /** Answers one of OWNED_METHODS. */
  handle(method: string, params: Result, ctx: McpRequestContext): Promise<Result> {
    switch (method) {
      case 'resources/read':
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return this.toResourceOwner(method, params, ctx);
      case 'completion/complete':
        return this.complete(params, ctx);
      case 'logging/setLevel':
        return this.access.reachable(ctx).then((providers) => this.setLevelOn(providers, params, ctx));
      default:
        throw new RpcError(JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${method}`);
    }
  }

  private async toResourceOwner(method: string, params: Result, ctx: McpRequestContext): Promise<Result> {
    const uri = params.uri;
    if (typeof uri !== 'string') throw invalidParams('params.uri must be a string');
    const owner = await this.resourceOwner(uri, ctx);
    if (!owner) await this.access.connectFirst(ctx);
    if (!owner) throw new RpcError(GATEWAY_RPC.RESOURCE_NOT_FOUND, 'Resource not found', 200, { uri });
    return this.access.forward(owner, method, params, ctx);
  }

  /** The first reachable provider listing the uri, else the first whose template it matches (lists first: a listed resource wins over any template). */
  private async resourceOwner(uri: string, ctx: McpRequestContext): Promise<ProviderRecord | null> {
    return (
      (await this.firstListing(ctx, 'resources', (item) => item.uri === uri)) ??
      (await this.firstListing(
        ctx,
        'resourceTemplates',
        (item) => typeof item.uriTemplate === 'string' && matchesTemplate(item.uriTemplate, uri),
      ))
    );
  }

  /** completion/complete: `ref/prompt` goes to the prompt's owner, `ref/resource` to the owner of that template (or listed uri). */
  private async complete(params: Result, ctx: McpRequestContext): Promise<Result> {
    const ref = params.ref;
    if (typeof ref !== 'object' || ref === null) throw invalidParams('params.ref must be an object');
    const { type, name, uri } = ref as Result;
    let owner: ProviderRecord | null;
    if (type === 'ref/prompt' && typeof name === 'string')
      owner = await this.firstListing(ctx, 'prompts', (item) => item.name === name);
    else if (type === 'ref/resource' && typeof uri === 'string') {
      owner =
        (await this.firstListing(ctx, 'resourceTemplates', (item) => item.uriTemplate === uri)) ??
        (await this.firstListing(ctx, 'resources', (item) => item.uri === uri));
    } else throw invalidParams('params.ref must be a ref/prompt with a name or a ref/resource with a uri');
    if (!owner) await this.access.connectFirst(ctx);
    if (!owner)
      throw invalidParams(
        type === 'ref/prompt' ? `Unknown prompt: ${String(name)}` : `Unknown resource template: ${String(uri)}`,
      );
    return this.access.forward(owner, 'completion/complete', params, ctx);
  }

  /** The first reachable provider (routing order) whose list of `kind` has an item that `has` picks. */
  private async firstListing(
    ctx: McpRequestContext,
    kind: ListKind,
    has: (item: ListItem) => boolean,
  ): Promise<ProviderRecord | null> {
    const providers = await this.access.reachable(ctx);
    const lists = await Promise.all(
      providers.map(async (provider) => ({ provider, items: await this.access.list(provider, kind, ctx) })),
    );
    return lists.find(({ items }) => items.some(has))?.provider ?? null;
  }

  /**
   * logging/setLevel, the gateway's own on both endpoints (the unified one's reachable providers,
   * the proxy's one): to each provider in parallel, the level holding for the client's session
   * with it (a provider without logging refuses, and is left as it is). `{}` once every provider
   * answered, so a client that sets a level (the Inspector) works whatever the upstream offers; a
   * malformed level is refused before any is asked.
   */
  async setLevelOn(providers: readonly ProviderRecord[], params: Result, ctx: McpRequestContext): Promise<Result> {
    if (typeof params.level !== 'string' || !LOG_LEVELS.has(params.level))
      throw invalidParams(`params.level must be one of ${[...LOG_LEVELS].join(', ')}`);
    await Promise.all(
      providers.map((p) => this.access.forward(p, 'logging/setLevel', params, ctx).catch(() => undefined)),
    );
    return {};
  }
}

/** RFC 5424 severities, as MCP's LoggingLevel names them. */
const LOG_LEVELS: ReadonlySet<string> = new Set([
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]);
