import type { Catalog } from '@agentgw/catalog';
import {
  CALL_TOOL,
  hybridSearchFromEnv,
  isWeakResult,
  META_TOOLS,
  oneLine,
  providerSummaries,
  providerTools,
  SEARCH_GUIDANCE,
  SEARCH_TOOLS,
  ToolIndexCache,
  visibleSetKey,
  type BrowseEntry,
  type HybridSearch,
} from '@agentgw/tool-search';
import type { McpRequestContext } from '../mcp-context.js';
import type { ListItem } from '../provider-view/list-items.js';
import { invalidParams } from '../rpc-errors.js';
import { toolPolicy } from '../tool-call/tool-access.js';
import { callToolArgs, searchToolsArgs } from './meta-tool-args.js';
import { toolSurfaceOf } from './tool-surface.js';

type Result = Record<string, unknown>;

/** A meta-tool's answer: the same object as text and as structured content. */
const structured = (answer: Result): Result => ({
  content: [{ type: 'text', text: JSON.stringify(answer) }],
  structuredContent: answer,
});

/** How many distinct visible sets keep a built index (least recently used evicted; ~100 KB each at 300 tools). */
export const MAX_CACHED_INDEXES = 256;

/** What the search surface takes from the MCP methods (mcp-methods.ts) for one request. */
export interface SearchSurfaceHooks {
  /** The caller's tools exactly as its tools/list would list them (reachable providers, policy applied). */
  visible(): Promise<ListItem[]>;
  /** Where a listed name's calls go (provider and upstream name), as tools/call resolves it; null when nowhere. */
  resolve(name: string): Promise<{ providerId: string; upstreamName: string } | null>;
  /** The normal tools/call path (policy, hold, forward, audit), re-entered with the real tool's params. */
  call(params: Result): Promise<Result>;
  /** The acting agent wants every call confirmed: every tool is held. */
  alwaysConfirm: boolean;
}

/**
 * The search surface of the unified endpoint (issue 24.2): with it on, tools/list answers the
 * meta-tools only, `search_tools` ranks the caller's visible tools, and `call_tool` hands the
 * named tool to the normal call path, so policy, hold and audit see the real tool. A direct
 * tools/call of a real tool still works. Indexes are shared by callers with the same visible set.
 */
export class ToolSearch {
  private readonly indexes = new ToolIndexCache<ListItem>(MAX_CACHED_INDEXES);

  /**
   * `hybrid`: lexical ranking fused with an embeddings endpoint when TOOL_SEARCH_EMBEDDINGS_URL
   * configures one (packages/tool-search, embeddings-client.ts), else null: lexical only, nothing fetched.
   */
  constructor(
    private readonly catalog: Pick<Catalog, 'agents' | 'providers' | 'rules'>,
    private readonly hybrid: HybridSearch | null = hybridSearchFromEnv(process.env),
  ) {}

  /**
   * Answers tools/list and the meta-tools' tools/call when the surface is on; null when the normal
   * path answers. The hooks are made only then, so a plain call allocates nothing here.
   */
  async handle(
    method: string,
    params: Result,
    ctx: McpRequestContext,
    hooksOf: () => SearchSurfaceHooks,
  ): Promise<Result | null> {
    if (method !== 'tools/list' && method !== 'tools/call') return null;
    if ((await toolSurfaceOf(this.catalog, ctx.principal, ctx.endpoint)) !== 'search') return null;
    if (method === 'tools/list') return { tools: [...META_TOOLS] };
    if (params.name !== SEARCH_TOOLS && params.name !== CALL_TOOL) return null;
    const args = params.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      throw invalidParams('params.arguments must be an object');
    const hooks = hooksOf();
    if (params.name === CALL_TOOL) {
      const inner = callToolArgs(args as Result);
      return hooks.call({ ...params, name: inner.name, arguments: inner.arguments });
    }
    const request = searchToolsArgs(args as Result);
    return request.mode === 'browse' ? this.browse(request.provider, hooks) : this.search(request, ctx, hooks);
  }

  private async search(
    { query, limit }: { query: string; limit: number },
    ctx: McpRequestContext,
    hooks: SearchSurfaceHooks,
  ): Promise<Result> {
    const visible = await hooks.visible();
    const key = visibleSetKey(visible);
    const index = this.indexes.peek(key) ?? (await this.indexWithProviders(key, visible, hooks));
    const hits = this.hybrid === null ? index.search(query, limit) : await this.hybrid.search(index, query, limit);
    const held = hooks.alwaysConfirm
      ? () => Promise.resolve(true)
      : (name: string) => this.requiresConfirmation(ctx, hooks, name);
    const tools = await Promise.all(
      hits.map(async ({ tool, name, alsoFrom }) => ({
        name,
        ...(typeof tool.title === 'string' ? { title: tool.title } : {}),
        description: typeof tool.description === 'string' ? tool.description : '',
        inputSchema: tool.inputSchema ?? { type: 'object' },
        ...((await held(name)) && { held: true }),
        // The same tool from other providers, folded into this hit (callable by these names too).
        ...(alsoFrom.length > 0 && { alsoFrom }),
      })),
    );
    // A weak result says so and offers the providers to browse instead.
    const answer = isWeakResult(hits)
      ? {
          tools,
          note: SEARCH_GUIDANCE.weakNote,
          categories: providerSummaries(await this.browseEntries(visible, hooks)),
        }
      : { tools };
    return structured(answer);
  }

  /** A visible set's index, built with each tool's provider (its name and description's first sentence), so both are searched and copies across providers fold. */
  private async indexWithProviders(key: string, visible: ListItem[], hooks: SearchSurfaceHooks) {
    const labels = new Map(
      (await this.browseEntries(visible, hooks)).map(({ name, provider }) => [
        name,
        { name: provider.name, title: provider.description === null ? '' : oneLine(provider.description) },
      ]),
    );
    return this.indexes.get(
      key,
      () => visible,
      (tool) => (typeof tool.name === 'string' ? (labels.get(tool.name) ?? null) : null),
    );
  }

  /** The browse mode: the caller's providers with a one-line summary each, or one provider's tools. */
  private async browse(provider: string | null, hooks: SearchSurfaceHooks): Promise<Result> {
    const entries = await this.browseEntries(await hooks.visible(), hooks);
    if (provider === null) return structured({ providers: providerSummaries(entries) });
    const tools = providerTools(entries, provider);
    if (tools === null)
      throw invalidParams(
        `${SEARCH_TOOLS}: arguments.provider names no provider you can browse; browse without it for the list`,
      );
    return structured({ provider, tools });
  }

  /** Each visible tool with the provider its calls go to (as tools/call resolves it); tools that resolve nowhere are left out. */
  private async browseEntries(visible: readonly ListItem[], hooks: SearchSurfaceHooks): Promise<BrowseEntry[]> {
    const entries = await Promise.all(
      visible.map(async (tool): Promise<BrowseEntry | null> => {
        if (typeof tool.name !== 'string') return null;
        const resolved = await hooks.resolve(tool.name);
        const provider = resolved && (await this.catalog.providers.get(resolved.providerId));
        if (!provider) return null;
        const description = typeof tool.description === 'string' ? tool.description : '';
        return { name: tool.name, description, provider: { name: provider.name, description: provider.description } };
      }),
    );
    return entries.filter((entry) => entry !== null);
  }

  /** Whether the policy holds a listed tool's calls for confirmation, decided on its provider and upstream name as tools/call decides it. */
  private async requiresConfirmation(
    ctx: McpRequestContext,
    hooks: SearchSurfaceHooks,
    name: string,
  ): Promise<boolean> {
    const resolved = await hooks.resolve(name);
    if (resolved === null) return false;
    return (
      (await toolPolicy(this.catalog, ctx.principal, resolved.providerId, resolved.upstreamName)).action ===
      'require_confirmation'
    );
  }
}
