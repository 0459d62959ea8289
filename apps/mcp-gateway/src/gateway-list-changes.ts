import type { EventBus, Unsubscribe } from '@agentgw/core';

/** The list_changed notifications a client may be told of. */
export type ListChangedMethod =
  'notifications/tools/list_changed' | 'notifications/prompts/list_changed' | 'notifications/resources/list_changed';

const EVERY_LIST: readonly ListChangedMethod[] = [
  'notifications/tools/list_changed',
  'notifications/resources/list_changed',
  'notifications/prompts/list_changed',
];
const TOOLS_ONLY: readonly ListChangedMethod[] = ['notifications/tools/list_changed'];

/** A following of the gateway's own list changes: `ready` once every bus subscription is settled, `stop` ends them. */
export interface ListChangeFollowing {
  ready: Promise<void>;
  stop(): void;
}

/**
 * The one place that knows which gateway events change what a client lists, so a session's GET
 * stream and a 2026-07-28 `subscriptions/listen` announce alike: a provider change touches every
 * list, an access-rule change the tools, a pin change the tools (a first-sight pin changes
 * nothing a client sees; a quarantine, an approval or a block does).
 */
export function followListChanges(bus: EventBus, announce: (method: ListChangedMethod) => void): ListChangeFollowing {
  const changed = (methods: readonly ListChangedMethod[]) => () => methods.forEach(announce);
  const subscriptions: Promise<Unsubscribe>[] = [
    bus.subscribe('providers.changed', changed(EVERY_LIST)),
    bus.subscribe('rules.changed', changed(TOOLS_ONLY)),
    bus.subscribe('tool_pins.changed', ({ change }) => void (change !== 'pinned' && changed(TOOLS_ONLY)())),
  ];
  return {
    // A subscription the bus could not make is not retried here; the stream goes on without it.
    ready: Promise.all(subscriptions).then(
      () => undefined,
      () => undefined,
    ),
    stop: () => subscriptions.forEach((s) => void s.then((off) => off()).catch(() => undefined)),
  };
}
