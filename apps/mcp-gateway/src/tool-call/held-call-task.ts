import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { APPROVAL_SPENT_REASON, CANCELLED_REASON } from '@agentgw/confirmations';
import type { ClientConfirmations, Clock, HeldCall, Logger } from '@agentgw/core';
import { isModernVersion, JSON_RPC } from '@agentgw/mcp-client';
import { TASKS_EXTENSION } from '../extensions/extension-ids.js';
import type { HeldTaskRef, TaskIdCodec } from '../extensions/task-ids.js';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import { invalidParams, RpcError, toRpcError } from '../rpc-errors.js';
import { UpstreamAnswer } from '../upstream-forwarding.js';
import { askablePerson, decisionOf, questionOf } from './client-carrier.js';
import { answerIn, ROUND_ENDED_REASON, ROUND_QUESTION_KEY } from './held-call-round.js';
import { refusedOutcome, taskOf } from './held-task-shapes.js';
import type { HeldTaskEntry, HeldTaskOutcome, HeldTaskStore } from './held-task-store.js';
import type { AllowedCall, ToolCallCommand } from './tool-call.command.js';
import { heldCallOf } from './tool-call.usecase.js';

/** What held-call tasks need: the hub (open, settle, answer, cancel on any replica), the shared task store, the task ids, the console's page. */
export interface HeldCallTasksDeps {
  hub: Pick<ClientConfirmations, 'openRound' | 'settleRound' | 'answerFromClient' | 'cancelRound'>;
  store: HeldTaskStore;
  ids: TaskIdCodec;
  consolePage: string | null;
  clock: Clock;
  logger: Logger;
}

/** Runs a task's confirmed call (its approval spent): re-checked and forwarded under its record (McpToolCall.runTask); a refusal thrown as its JSON-RPC error. */
export interface HeldTaskRunner {
  runTask(task: ConfirmedTask, ctx: McpRequestContext, providers: readonly ProviderRecord[]): Promise<McpResult>;
}

/** A held-call task whose confirmation released it: what it calls, and who confirmed it. */
export type ConfirmedTask = HeldTaskRef &
  Pick<HeldTaskEntry, 'arguments' | 'route' | 'alwaysConfirm'> & { confirmedBy: string | null };

/**
 * The `tasks` carrier of a held call (SEP-2663), for a 2026-07-28 client that declared the tasks
 * extension on the request: instead of being held, the call is answered at once with a task
 * whose id is sealed to its owner and confirmation (task-ids.ts), opened on any replica. Its
 * confirmation is stored and announced as a round's (the console and push decide it); its expiry
 * is the task's. `tasks/get` reads the confirmation as it stands: pending → `input_required` with
 * the approve/reject question when the person may answer in the client (askablePerson), else
 * `working`; confirmed → exactly one poll spends the approval and runs the call, its outcome kept
 * in the shared store for every later poll; rejected or timed out → `failed` with the held call's
 * refusal (a JSON-RPC error, as the synchronous call is answered). `tasks/update` answers through
 * the hub (first decision wins); `tasks/cancel` withdraws the confirmation.
 */
export class HeldCallTasks {
  constructor(private readonly deps: HeldCallTasksDeps) {}

  /** Whether this request takes a task: a 2026-07-28 request that declared the tasks extension (a cheap check on the held path only). */
  accepts(ctx: McpRequestContext): boolean {
    if (!isModernVersion(ctx.protocolVersion)) return false;
    const extensions = ctx.clientCapabilities.extensions;
    return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
  }

  /** The task of a held call: its confirmation stored and announced (not held), its entry kept, its record opened, then the CreateTaskResult. */
  async create(
    call: ToolCallCommand,
    allowed: AllowedCall,
    ctx: McpRequestContext,
    opened: Promise<void>,
  ): Promise<McpResult> {
    const { hub, store, ids, consolePage } = this.deps;
    const held = heldCallOf(call, allowed);
    const { confirmationId, expiresAt } = await hub.openRound(held);
    const now = this.deps.clock.now().toISOString();
    const { target } = call;
    const entry: HeldTaskEntry = {
      arguments: call.arguments,
      route: target.kind === 'routed' ? { kind: 'routed', providerFilter: target.providerFilter } : { kind: 'proxied' },
      alwaysConfirm: call.alwaysConfirm,
      mode: askablePerson(ctx, allowed, consolePage !== null)?.mode ?? null,
      createdAt: now,
      lastUpdatedAt: now,
      expiresAt: expiresAt.getTime(),
      outcome: null,
    };
    // Durable before it is answered (SEP-2663): a tasks/get on any replica finds it.
    await Promise.all([store.put(confirmationId, entry), opened]);
    const { auditId, risk, provider } = allowed;
    const ref: HeldTaskRef = {
      kind: 'held',
      confirmationId,
      auditId,
      providerId: provider.id,
      toolName: call.toolName,
      risk,
    };
    const taskId = ids.issue(ref, call.principal);
    return { resultType: 'task', ...this.pending(taskId, ref, entry, held, [provider]) };
  }

  /** One of `tasks/get|update|cancel` on a held-call task (its id opened for this principal already). */
  async handle(
    method: string,
    taskId: string,
    ref: HeldTaskRef,
    params: McpResult,
    ctx: McpRequestContext,
    providers: readonly ProviderRecord[],
    runner: HeldTaskRunner,
  ): Promise<McpResult> {
    if (!this.accepts(ctx))
      throw new RpcError(
        JSON_RPC.MISSING_REQUIRED_CLIENT_CAPABILITY,
        'tasks/* needs the tasks extension declared',
        400,
        {
          missing: [`extensions.${TASKS_EXTENSION}`],
        },
      );
    const entry = await this.deps.store.get(ref.confirmationId);
    if (entry === null) throw invalidParams('Unknown task');
    const held = heldOf(ref, entry, ctx.principal);
    if (method === 'tasks/update') return this.update(ref, entry, held, params, ctx);
    if (method === 'tasks/cancel') return this.cancel(ref, entry, held);
    return this.get(taskId, ref, entry, held, ctx, providers, runner);
  }

  /** tasks/get: the task as its confirmation stands (see the class); a confirmed one runs here, once across polls and replicas. */
  private async get(
    taskId: string,
    ref: HeldTaskRef,
    entry: HeldTaskEntry,
    held: HeldCall,
    ctx: McpRequestContext,
    providers: readonly ProviderRecord[],
    runner: HeldTaskRunner,
  ): Promise<McpResult> {
    if (entry.outcome !== null) return taskOf(taskId, entry, entry.outcome);
    const outcome = await this.deps.hub.settleRound(ref.confirmationId, held);
    switch (outcome.decision) {
      case 'pending':
        return this.pending(taskId, ref, entry, held, providers);
      case 'refused':
        throw invalidParams('Unknown task');
      case 'confirmed': {
        const task = { ...ref, ...entry, confirmedBy: outcome.confirmedBy };
        return this.finish(taskId, ref, entry, await this.run(task, ctx, providers, runner));
      }
      case 'expired':
        return this.finish(
          taskId,
          ref,
          entry,
          refusedOutcome(ref, outcome.confirmationId, 'rejected', ROUND_ENDED_REASON),
        );
      default:
        // Another poll spent the approval and runs the call: working until it leaves the result.
        if (outcome.reason === APPROVAL_SPENT_REASON) return taskOf(taskId, entry, null, { statusMessage: RUNNING });
        if (outcome.reason === CANCELLED_REASON) return this.finish(taskId, ref, entry, { kind: 'cancelled' });
        return this.finish(
          taskId,
          ref,
          entry,
          refusedOutcome(ref, outcome.confirmationId, outcome.decision, outcome.reason),
        );
    }
  }

  /** tasks/update: the person's approve/reject given to the hub; an answer to no outstanding question (or a second) is ignored, as SEP-2663 says. */
  private async update(
    ref: HeldTaskRef,
    entry: HeldTaskEntry,
    held: HeldCall,
    params: McpResult,
    ctx: McpRequestContext,
  ): Promise<McpResult> {
    const { principal } = ctx;
    const confirmed = entry.mode === 'form' && entry.outcome === null ? decisionOf(answerIn(params)) : null;
    if (confirmed === null || principal.via !== 'oauth' || principal.agentId !== null) return {};
    const answer = { confirmed, userId: principal.userId, clientId: principal.oauth.clientId };
    await this.deps.hub.answerFromClient(ref.confirmationId, held, answer);
    return {};
  }

  /** tasks/cancel: the confirmation withdrawn while pending (the console can no longer approve it); acknowledged either way (cooperative). */
  private async cancel(ref: HeldTaskRef, entry: HeldTaskEntry, held: HeldCall): Promise<McpResult> {
    if (entry.outcome === null && (await this.deps.hub.cancelRound(ref.confirmationId, held)) === 'applied')
      await this.keep(ref, entry, { kind: 'cancelled' });
    return {};
  }

  /** Runs the released call, its outcome as the task's end: the result (an `isError` one too), or its JSON-RPC error. */
  private async run(
    task: ConfirmedTask,
    ctx: McpRequestContext,
    providers: readonly ProviderRecord[],
    runner: HeldTaskRunner,
  ): Promise<HeldTaskOutcome> {
    try {
      return { kind: 'completed', result: await runner.runTask(task, ctx, providers) };
    } catch (err) {
      const error = err instanceof UpstreamAnswer ? err.response.error : toRpcError(err, this.deps.logger).toObject();
      return { kind: 'failed', error };
    }
  }

  /** Keeps the task's end for every later poll (the task's TTL again from now), and answers it. */
  private async finish(
    taskId: string,
    ref: HeldTaskRef,
    entry: HeldTaskEntry,
    outcome: HeldTaskOutcome,
  ): Promise<McpResult> {
    return taskOf(taskId, await this.keep(ref, entry, outcome), outcome);
  }

  private async keep(ref: HeldTaskRef, entry: HeldTaskEntry, outcome: HeldTaskOutcome): Promise<HeldTaskEntry> {
    const now = this.deps.clock.now();
    const ttlMs = entry.expiresAt - Date.parse(entry.createdAt);
    const ended = { ...entry, outcome, lastUpdatedAt: now.toISOString(), expiresAt: now.getTime() + ttlMs };
    await this.deps.store.put(ref.confirmationId, ended);
    return ended;
  }

  /** A pending task: the question when its person may answer in the client (and the provider is at hand to name), else working. */
  private pending(
    taskId: string,
    ref: HeldTaskRef,
    entry: HeldTaskEntry,
    held: HeldCall,
    providers: readonly ProviderRecord[],
  ): McpResult {
    const provider = providers.find((p) => p.id === ref.providerId);
    if (entry.mode === null || provider === undefined) return taskOf(taskId, entry, null, { statusMessage: WAITING });
    const where = { confirmationId: ref.confirmationId, page: this.deps.consolePage };
    return taskOf(taskId, entry, null, {
      status: 'input_required',
      statusMessage: 'The call waits for your confirmation, here or on the console.',
      inputRequests: { [ROUND_QUESTION_KEY]: questionOf(entry.mode, 'modern', held, provider, where) },
    });
  }
}

const WAITING = 'The call waits for a person to confirm it on the console or by push.';
const RUNNING = 'The call was approved and is running.';
/** The held call a task stands for, as the hub binds it (its args hash): the owner's identity, the id's call and the entry's arguments. */
const heldOf = (ref: HeldTaskRef, entry: HeldTaskEntry, principal: Principal): HeldCall =>
  heldCallOf(
    { principal, toolName: ref.toolName, arguments: entry.arguments },
    { auditId: ref.auditId, risk: ref.risk, provider: { id: ref.providerId } },
  );
