import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import { matchGlob, toolNameProblem } from '@agentgw/core';
import { exposedTool } from '@agentgw/tool-search';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import type { CallerProviders } from '../provider-view/caller-providers.js';
import type { ListItem, ListKind, ProviderList } from '../provider-view/list-items.js';
import { egressRefused, GATEWAY_RPC, invalidParams, RpcError } from '../rpc-errors.js';
import { toolPolicy } from '../tool-call/tool-access.js';
import { offeredTools } from '../tool-names/offered-tools.js';
import { nameScope, type ToolNaming } from '../tool-names/tool-naming.js';
import type { ToolPins } from '../tool-pins/tool-pins.js';
import { leftOutOf, type LeftOut, type LeftOutProviders } from './left-out.js';

/** What the list methods read: the caller's view, exposed names, pins, the policy and how a request is sent or refused as the caller. */
export interface ListMethodsDeps {
  catalog: Catalog;
  view: CallerProviders;
  names: ToolNaming;
  pins: ToolPins;
  leftOut: LeftOutProviders;
  forward(provider: ProviderRecord, method: string, params: McpResult, ctx: McpRequestContext): Promise<McpResult>;
  /** Throws the caller's refusal for a per-user provider they have not connected (RequestTargets). */
  refuseUnconnected(provider: ProviderRecord, ctx: McpRequestContext): Promise<unknown>;
}

/**
 * The list methods as one caller sees them: the unified endpoint's merged tools/list (exposed
 * names, pins, policy, providers left out named), resources, templates and prompts merged in
 * routing order, prompts/get to the provider that lists the name, and the proxy's one provider's
 * tools/list.
 */
export class ListMethods {
  constructor(private readonly deps: ListMethodsDeps) {}

  /** The unified tools/list: the merged tools and the providers left out of them. */
  async toolsList(ctx: McpRequestContext): Promise<McpResult> {
    return this.deps.leftOut.named({ tools: await this.mergedTools(ctx) }, await this.unlistedProviders(ctx));
  }

  /**
   * The merged tools/list: every reachable provider's tools (lists fetched in parallel, each with
   * its own deadline; a failed one is left out) under their exposed names (tool-names/: chosen
   * once, never changed), sorted by exposed name; denied tools removed, the policy deciding on
   * the provider and the upstream name.
   */
  async mergedTools(ctx: McpRequestContext): Promise<ListItem[]> {
    const { view, pins, names, catalog } = this.deps;
    const reachable = await this.reachableFor(ctx);
    const lists = await Promise.all(
      reachable.map(async (provider) => ({
        provider,
        tools: offeredTools(provider, (await pins.apply(provider, await view.toolItems(provider, ctx))).visible),
      })),
    );
    const tools: ListItem[] = [];
    for (const { exposedName, provider, upstreamName, tool } of await names.expose(nameScope(ctx.principal), lists)) {
      if ((await toolPolicy(catalog, ctx.principal, provider.id, upstreamName)).action !== 'deny')
        tools.push(exposedTool(tool, exposedName));
    }
    return tools;
  }

  /**
   * One provider's tools/list for the proxy: those its pattern claims (as on the unified endpoint),
   * denied tools removed. A caller who must connect first gets none, the provider named as left
   * out with its connect URL (as on the unified endpoint).
   */
  async providerTools(ctx: McpRequestContext, provider: ProviderRecord): Promise<McpResult> {
    const list = await this.deps.view.list(provider, ctx, 'tools', ctx.clientCapabilities);
    if (list.needsAuth) return this.deps.leftOut.named({ tools: [] }, [leftOutOfList(provider, list)]);
    if (list.refusal) throw egressRefused(list.refusal, provider.id);
    if (list.items === null)
      throw new RpcError(GATEWAY_RPC.UPSTREAM_FAILED, 'The provider did not list its tools', 502, {
        reason: list.failure,
      });
    const tools: ListItem[] = [];
    for (const tool of (await this.deps.pins.apply(provider, list.items)).visible) {
      const name = toolNameOf(tool);
      if (name === null || !matchGlob(provider.pattern, name)) continue;
      if ((await toolPolicy(this.deps.catalog, ctx.principal, provider.id, name)).action !== 'deny') tools.push(tool);
    }
    return { tools };
  }

  /** Resources, templates or prompts of every reachable provider, first in routing order winning a key. */
  async merged(ctx: McpRequestContext, kind: Exclude<ListKind, 'tools'>): Promise<ListItem[]> {
    const keyOf = KEYS[kind];
    const reachable = await this.reachableFor(ctx);
    const lists = await Promise.all(reachable.map((p) => this.deps.view.list(p, ctx, kind)));
    const merged: ListItem[] = [];
    const seen = new Set<string>();
    for (const list of lists) {
      for (const item of list.items ?? []) {
        const key = keyOf(item);
        if (key === null || seen.has(key)) continue;
        seen.add(key);
        merged.push(item);
      }
    }
    return merged;
  }

  /** prompts/get on the unified endpoint: to the first reachable provider listing that name. */
  async getPrompt(ctx: McpRequestContext, params: McpResult): Promise<McpResult> {
    const name = params.name;
    if (typeof name !== 'string') throw invalidParams('params.name must be a string');
    for (const provider of await this.reachableFor(ctx)) {
      const list = await this.deps.view.list(provider, ctx, 'prompts');
      if ((list.items ?? []).some((item) => item.name === name))
        return this.deps.forward(provider, 'prompts/get', params, ctx);
    }
    await this.connectFirst(ctx);
    throw invalidParams(`Unknown prompt: ${name}`);
  }

  /**
   * A prompt, resource or completion no provider lists for the caller may be one a per-user
   * provider they have not connected would list: refused with its connect URL, as a call of a name
   * it claims is. Returns when there is none (the name is unknown).
   */
  async connectFirst(ctx: McpRequestContext): Promise<void> {
    for (const provider of await this.reachableFor(ctx)) {
      if (!(await this.deps.view.mustConnect(provider, ctx))) continue;
      // Throws the caller's refusal; returns only when they connected since their list was cached.
      await this.deps.refuseUnconnected(provider, ctx);
    }
  }

  /** The providers of the caller's routing set on this endpoint (a `providers=` filter narrows the unified one) that they may reach. */
  async reachableFor(ctx: McpRequestContext): Promise<ProviderRecord[]> {
    const { view } = this.deps;
    const filter = ctx.endpoint.kind === 'unified' ? ctx.endpoint.providerFilter : null;
    return view.reachable(ctx.principal, await view.routingSet(ctx.principal, filter));
  }

  /**
   * The reachable providers whose tool list could not be had, from the lists just used (no upstream
   * call): named in the answer, never dropped silently; one the caller must connect first with its connect URL.
   */
  private async unlistedProviders(ctx: McpRequestContext): Promise<LeftOut[]> {
    const reachable = await this.reachableFor(ctx);
    const lists = await Promise.all(reachable.map((p) => this.deps.view.list(p, ctx, 'tools', ctx.clientCapabilities)));
    return reachable.flatMap((provider, i) => {
      const list = lists[i];
      return list !== undefined && list.items === null ? [leftOutOfList(provider, list)] : [];
    });
  }
}

const stringOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** What identifies an item of each merged kind: the first provider in routing order wins it. */
const KEYS: Record<Exclude<ListKind, 'tools'>, (item: ListItem) => string | null> = {
  resources: (item) => stringOf(item.uri),
  resourceTemplates: (item) => stringOf(item.uriTemplate),
  prompts: (item) => stringOf(item.name),
};

/** A listed tool's name, or null for one tools/call refuses (over the glob cap, which would fail the whole list; hidden characters; surrounding spaces). */
const toolNameOf = (tool: ListItem): string | null => {
  const name = stringOf(tool.name);
  return name !== null && toolNameProblem(name) === null ? name : null;
};

/** A provider left out of a tools/list, with the connect URL when the caller must connect first. */
const leftOutOfList = (provider: ProviderRecord, list: ProviderList): LeftOut => {
  const leftOut = leftOutOf(provider, list.failure ?? 'no tool list');
  return list.needsAuth?.authUrl ? { ...leftOut, authUrl: list.needsAuth.authUrl } : leftOut;
};
