import type { Principal } from '@agentgw/auth';
import type { ProviderTaskRef } from '../extensions/task-ids.js';
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
}

/** The client's filter: known flags set to true, at most MAX_FILTER_ITEMS uris and task ids (a task id not the caller's is dropped, not told apart). */
export function parseListenFilter(
  raw: unknown,
  principal: Principal,
  openTask: (taskId: string, principal: Principal) => ProviderTaskRef | null,
): ListenFilter {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalidParams('params.notifications must be an object');
  const given = raw as Result;
  const flags: ListenFilter['flags'] = {};
  for (const flag of Object.keys(LIST_FLAGS) as (keyof typeof LIST_FLAGS)[])
    if (given[flag] === true) flags[flag] = true;
  const uris = stringList(given.resourceSubscriptions, 'resourceSubscriptions');
  const tasks: { clientId: string; ref: ProviderTaskRef }[] = [];
  for (const clientId of stringList(given.taskIds, 'taskIds')) {
    const ref = openTask(clientId, principal);
    if (ref) tasks.push({ clientId, ref });
  }
  return { flags, resourceSubscriptions: uris, tasks };
}

/** What the gateway agrees to pass on (the ack's `notifications`): the flags, the uris and the task ids it could open. */
export function agreedFilter(filter: ListenFilter): Result {
  return {
    ...filter.flags,
    ...(filter.resourceSubscriptions.length > 0 ? { resourceSubscriptions: filter.resourceSubscriptions } : {}),
    ...(filter.tasks.length > 0 ? { taskIds: filter.tasks.map((t) => t.clientId) } : {}),
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
