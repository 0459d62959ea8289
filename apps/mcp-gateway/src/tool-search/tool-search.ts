import type { Catalog } from '@agentgw/catalog';
import { CALL_TOOL, META_TOOLS, SEARCH_TOOLS, ToolIndexCache, visibleSetKey } from '@agentgw/tool-search';
import type { McpRequestContext } from '../mcp-context.js';
import type { ListItem } from '../provider-view/list-items.js';
import { invalidParams } from '../rpc-errors.js';
import { toolPolicy } from '../tool-call/tool-access.js';
import { callToolArgs, searchToolsArgs } from './meta-tool-args.js';
import { toolSurfaceOf } from './tool-surface.js';

type Result = Record<string, unknown>;

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

  constructor(private readonly catalog: Pick<Catalog, 'agents' | 'providers' | 'rules'>) {}

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
    return this.search(searchToolsArgs(args as Result), ctx, hooks);
  }

  private async search(
    { query, limit }: { query: string; limit: number },
    ctx: McpRequestContext,
    hooks: SearchSurfaceHooks,
  ): Promise<Result> {
    const visible = await hooks.visible();
    const hits = this.indexes.get(visibleSetKey(visible), () => visible).search(query, limit);
    const held = hooks.alwaysConfirm
      ? () => Promise.resolve(true)
      : (name: string) => this.requiresConfirmation(ctx, hooks, name);
    const tools = await Promise.all(
      hits.map(async ({ tool, name }) => ({
        name,
        ...(typeof tool.title === 'string' ? { title: tool.title } : {}),
        description: typeof tool.description === 'string' ? tool.description : '',
        inputSchema: tool.inputSchema ?? { type: 'object' },
        ...((await held(name)) && { held: true }),
      })),
    );
    return { content: [{ type: 'text', text: JSON.stringify({ tools }) }], structuredContent: { tools } };
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
