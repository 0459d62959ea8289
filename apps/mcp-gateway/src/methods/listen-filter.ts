import type { Principal } from '@agentgw/auth';
import type { HeldTaskRef, ProviderTaskRef, TaskRef } from '../extensions/task-ids.js';
import { invalidParams } from '../rpc-errors.js';

/**
 * The filter of a `subscriptions/listen` (methods/subscriptions-listen.ts): which list changes,
 * resource uris and tasks a client asks to be told of, checked and bounded.
 */

/** Resource uris and task ids one filter may name, and the longest uri taken. */
const MAX_FILTER_ITEMS = 100;
const MAX_URI_LENGTH = 2_048;

type Result = Record<string, unknown>;

/** The filter flags and the notification each one lets through. */
export const LIST_FLAGS = {
  toolsListChanged: 'notifications/tools/list_changed',
  promptsListChanged: 'notifications/prompts/list_changed',
  resourcesListChanged: 'notifications/resources/list_changed',
} as const;

/** A `subscriptions/listen` filter, checked and bounded. */
export interface ListenFilter {
  flags: Partial<Record<keyof typeof LIST_FLAGS, true>>;
  resourceSubscriptions: readonly string[];
  /** Gateway task ids (tasks extension), by the provider task each names. */
  tasks: readonly { clientId: string; ref: ProviderTaskRef }[];
  /** Gateway task ids of held calls (told of by the gateway itself, tool-call/held-task-notices.ts). */
  heldTasks: readonly { clientId: string; ref: HeldTaskRef }[];
}

/** The client's filter: known flags set to true, at most MAX_FILTER_ITEMS uris and task ids (a task id not the caller's is dropped, not told apart). */
export function parseListenFilter(
  raw: unknown,
  principal: Principal,
  openTask: (taskId: string, principal: Principal) => TaskRef | null,
): ListenFilter {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalidParams('params.notifications must be an object');
  const given = raw as Result;
  const flags: ListenFilter['flags'] = {};
  for (const flag of Object.keys(LIST_FLAGS) as (keyof typeof LIST_FLAGS)[])
    if (given[flag] === true) flags[flag] = true;
  const uris = stringList(given.resourceSubscriptions, 'resourceSubscriptions');
  const tasks: ListenFilter['tasks'][number][] = [];
  const heldTasks: ListenFilter['heldTasks'][number][] = [];
  for (const clientId of stringList(given.taskIds, 'taskIds')) {
    const ref = openTask(clientId, principal);
    if (ref?.kind === 'provider') tasks.push({ clientId, ref });
    else if (ref?.kind === 'held') heldTasks.push({ clientId, ref });
  }
  return { flags, resourceSubscriptions: uris, tasks, heldTasks };
}

/** What the gateway agrees to pass on (the ack's `notifications`): the flags, the uris and the task ids it could open. */
export function agreedFilter(filter: ListenFilter): Result {
  const taskIds = [...filter.tasks, ...filter.heldTasks].map((t) => t.clientId);
  return {
    ...filter.flags,
    ...(filter.resourceSubscriptions.length > 0 ? { resourceSubscriptions: filter.resourceSubscriptions } : {}),
    ...(taskIds.length > 0 ? { taskIds } : {}),
  };
}

function stringList(value: unknown, field: string): string[] {
  if (value === undefined) return [];
  if (
    !Array.isArray(value) ||
    value.length > MAX_FILTER_ITEMS ||
    !value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= MAX_URI_LENGTH)
  ) {
    throw invalidParams(
      `params.notifications.${field} must be at most ${MAX_FILTER_ITEMS} non-empty strings of at most ${MAX_URI_LENGTH} characters`,
    );
  }
  return value as string[];
}
