import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import type { McpRequestContext } from '../mcp-context.js';
import { GATEWAY_RPC, invalidParams, RpcError } from '../rpc-errors.js';
import { escapesDirectory, skillDirectory } from './skill-files.js';
import type { HeldTaskRef, TaskIdCodec } from './task-ids.js';

type Result = Record<string, unknown>;

/** What the extension methods need from the MCP methods (mcp-methods.ts): forwarding as the caller, and the access rule for a skill. */
export interface ExtensionAccess {
  /** Sends a request to a provider for the caller (an upstream JSON-RPC error is passed on as it is). */
  forward(provider: ProviderRecord, method: string, params: Result, ctx: McpRequestContext): Promise<Result>;
  /** Whether the caller may see and load the provider's skill of this name (README: "Skills"). */
  skillAllowed(ctx: McpRequestContext, provider: ProviderRecord, name: string): Promise<boolean>;
  /** Answers tasks/* on the gateway's own task of a held call (tool-call/held-call-task.ts). */
  heldTask(
    method: string,
    taskId: string,
    ref: HeldTaskRef,
    params: Result,
    ctx: McpRequestContext,
    providers: readonly ProviderRecord[],
  ): Promise<Result>;
}

/** The extension methods the gateway answers on both endpoints: the tasks extension (SEP-2663) and skills (SEP-2640). */
export const EXTENSION_METHODS: ReadonlySet<string> = new Set([
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'skills/list',
  'skills/get',
]);

/** Pages of one provider's skills/list followed, and skills kept in all (a hostile upstream cannot make a list unbounded). */
const MAX_SKILL_PAGES = 20;
const MAX_SKILLS = 2_000;

/**
 * Tasks and skills through the gateway. Task ids are multiplexed: the gateway's own task of a held
 * call is answered by the gateway (tool-call/held-call-task.ts); a provider's task id goes to the
 * client sealed with the provider and the principal (`TaskIdCodec`), so `tasks/*` reach the
 * provider that made the task, under its own id, and only for the principal it was made for
 * (anyone else: `-32602` Unknown task, as for a forged id). Skills are merged like tools: each
 * provider's list in routing order (the first provider with a skill uri wins it), a skill the
 * access rules deny is neither listed nor got.
 */
export class ExtensionMethods {
  constructor(
    private readonly access: ExtensionAccess,
    private readonly taskIds: TaskIdCodec,
  ) {}

  /** Answers one of EXTENSION_METHODS among `providers` (the caller's reachable ones on the unified endpoint; the proxy's one provider). */
  handle(
    method: string,
    params: Result,
    ctx: McpRequestContext,
    providers: readonly ProviderRecord[],
  ): Promise<Result> {
    switch (method) {
      case 'skills/list':
        return this.listSkills(ctx, providers);
      case 'skills/get':
        return this.getSkill(params, ctx, providers);
      default:
        return this.toTask(method, params, ctx, providers);
    }
  }

  /**
   * resources/read (and subscribe, unsubscribe) of a `skill://` uri: served only as a file of a
   * skill the caller may see, by that skill's owner. The skill is the one whose directory is the
   * longest prefix of the uri among every provider's skills (so a denied skill nested under an
   * allowed one keeps its files); denied, unclaimed or a uri with dot segments → `-32002`
   * Resource not found, as for a file nobody has, so a denied skill is not confirmed.
   */
  async skillResource(
    method: string,
    params: Result,
    ctx: McpRequestContext,
    providers: readonly ProviderRecord[],
  ): Promise<Result> {
    const uri = params.uri as string;
    const notFound = new RpcError(GATEWAY_RPC.RESOURCE_NOT_FOUND, 'Resource not found', 200, {
      uri: uri.slice(0, 200),
    });
    if (escapesDirectory(uri)) throw notFound;
    let owner: OwnedSkill | null = null;
    let ownerDirectory = '';
    for (const candidate of await this.mergedSkills(ctx, providers)) {
      const directory = skillDirectory(candidate.skill.uri as string);
      if (directory !== null && uri.startsWith(directory) && directory.length > ownerDirectory.length)
        [owner, ownerDirectory] = [candidate, directory];
    }
    if (!owner?.allowed) throw notFound;
    return this.access.forward(owner.provider, method, params, ctx);
  }

  /** A provider's `CreateTaskResult` as the client gets it: its `taskId` replaced by the gateway's sealed one. */
  sealTask(provider: ProviderRecord, result: Result, principal: Principal): Result {
    if (typeof result.taskId !== 'string') return result;
    return {
      ...result,
      taskId: this.taskIds.issue(
        { kind: 'provider', providerId: provider.id, upstreamTaskId: result.taskId },
        principal,
      ),
    };
  }

  private async toTask(
    method: string,
    params: Result,
    ctx: McpRequestContext,
    providers: readonly ProviderRecord[],
  ): Promise<Result> {
    const taskId = params.taskId;
    if (typeof taskId !== 'string') throw invalidParams('params.taskId must be a string');
    const ref = this.taskIds.open(taskId, ctx.principal);
    if (ref?.kind === 'held') return this.access.heldTask(method, taskId, ref, params, ctx, providers);
    const provider = ref && providers.find((p) => p.id === ref.providerId);
    if (!ref || !provider) throw invalidParams('Unknown task');
    const result = await this.access.forward(provider, method, { ...params, taskId: ref.upstreamTaskId }, ctx);
    // The state of the task names it by the id the client knows.
    return typeof result.taskId === 'string' ? { ...result, taskId } : result;
  }

  /** skills/list: every provider's skills the caller may see, merged by uri in routing order (one page; cache hints private, 0). */
  private async listSkills(ctx: McpRequestContext, providers: readonly ProviderRecord[]): Promise<Result> {
    const owned = (await this.mergedSkills(ctx, providers)).filter((o) => o.allowed);
    return { skills: owned.map((o) => o.skill), ttlMs: 0, cacheScope: 'private' };
  }

  /** skills/get: forwarded to the provider whose list holds the uri, when the caller may see that skill; else -32602 (unknown and denied alike). */
  private async getSkill(
    params: Result,
    ctx: McpRequestContext,
    providers: readonly ProviderRecord[],
  ): Promise<Result> {
    const uri = params.uri;
    if (typeof uri !== 'string') throw invalidParams('params.uri must be a string');
    const owner = (await this.mergedSkills(ctx, providers)).find((o) => o.skill.uri === uri);
    if (!owner?.allowed) throw invalidParams(`Unknown skill: ${uri.slice(0, 200)}`);
    const result = await this.access.forward(owner.provider, 'skills/get', params, ctx);
    return { ...result, ttlMs: 0, cacheScope: 'private' };
  }

  /** Every provider's skills merged by uri in routing order (the first provider listing a uri owns it), each with whether the caller may see it. */
  private async mergedSkills(ctx: McpRequestContext, providers: readonly ProviderRecord[]): Promise<OwnedSkill[]> {
    const lists = await Promise.all(
      providers.map(async (provider) => ({
        provider,
        skills: await this.providerSkills(provider, ctx).catch(() => []),
      })),
    );
    const seen = new Set<string>();
    const owned: OwnedSkill[] = [];
    for (const { provider, skills } of lists) {
      for (const skill of skills) {
        const uri = skill.uri;
        if (typeof uri !== 'string' || seen.has(uri) || owned.length >= MAX_SKILLS) continue;
        seen.add(uri);
        owned.push({
          provider,
          skill,
          allowed: await this.access.skillAllowed(ctx, provider, skillName(skill, uri)),
        });
      }
    }
    return owned;
  }

  /** One provider's skills, every page (bounded); a provider without the extension refuses and has none. */
  private async providerSkills(provider: ProviderRecord, ctx: McpRequestContext): Promise<Result[]> {
    const skills: Result[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_SKILL_PAGES && skills.length < MAX_SKILLS; page++) {
      const result = await this.access.forward(provider, 'skills/list', cursor === undefined ? {} : { cursor }, ctx);
      if (Array.isArray(result.skills))
        for (const skill of result.skills)
          if (typeof skill === 'object' && skill !== null) skills.push(skill as Result);
      if (typeof result.nextCursor !== 'string' || result.nextCursor === '') break;
      cursor = result.nextCursor;
    }
    return skills;
  }
}

/** A skill as merged: the provider that owns its uri, what it listed, and whether the access rules let the caller see it. */
type OwnedSkill = { provider: ProviderRecord; skill: Result; allowed: boolean };

/** A skill's name as rules match it: its frontmatter `name`, else the uri's segment before `SKILL.md`. */
function skillName(skill: Result, uri: string): string {
  const frontmatter = skill.frontmatter;
  if (typeof frontmatter === 'object' && frontmatter !== null && typeof (frontmatter as Result).name === 'string')
    return (frontmatter as Result).name as string;
  const segments = uri.split('/').filter(Boolean);
  return segments.length >= 2 ? segments[segments.length - 2]! : uri;
}
