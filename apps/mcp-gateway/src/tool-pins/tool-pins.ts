import type { AuditTrail } from '@agentgw/audit';
import type { ProviderRecord } from '@agentgw/catalog';
import {
  definitionHashes,
  definitionOf,
  type Clock,
  type EventBus,
  type Logger,
  type ToolPinChange,
  type Unsubscribe,
} from '@agentgw/core';
import type { ListItem } from '../provider-view/list-items.js';
import { decidePin, missingPinnedBodies, type PinWrite, type SeenTool } from './pin-decisions.js';
import type { ProviderPins, ToolPinStore } from './tool-pin-store.js';

/** Why a listed tool is not served: never approved, changed since its pin, or kept blocked by an admin. */
export type QuarantineStatus = 'new' | 'changed' | 'blocked';

/** A provider's list with its pins applied: what is served, and what is held back (by name). */
export interface PinnedList {
  visible: ListItem[];
  quarantined: ReadonlyMap<string, QuarantineStatus>;
}

/** Pins are read again after this long even without an event (a lost bus message cannot hide a change for longer). */
const PINS_TTL_MS = 30_000;
const NOTHING_QUARANTINED: ReadonlyMap<string, QuarantineStatus> = new Map();

/** The refusal text of a call of a quarantined tool (JSON-RPC error and audit record). */
export const QUARANTINE_REASONS: Record<QuarantineStatus, string> = {
  new: 'Tool definition not approved yet: quarantined until an admin reviews it',
  changed: 'Tool definition changed since it was approved: quarantined until an admin reviews the change',
  blocked: 'Tool definition blocked by an admin',
};

const CHANGE_OF: Record<PinWrite['kind'], ToolPinChange> = {
  pin: 'pinned',
  quarantine: 'quarantined',
  revert: 'reverted',
};

/**
 * Pinned tool definitions on the gateway's side: applies each provider's pins to its upstream
 * list (tools/list and the per-call check use the same answer), records what it sees first or
 * sees changed (one replica wins each write, and only it audits and announces
 * `tool_pins.changed`), and caches the pins per process, dropped by that event and by
 * `providers.changed` (the mode is a provider field).
 */
export class ToolPins {
  private readonly cache = new Map<string, { at: number; pins: Promise<ProviderPins> }>();
  /** Hashes of listed tools (a cached list's items are the same objects until it is fetched again). */
  private readonly seen = new WeakMap<ListItem, SeenTool>();
  /** The last answer per list, valid while the pins it was made from are. */
  private readonly answers = new WeakMap<ListItem[], { pins: ProviderPins; list: PinnedList }>();
  private unsubscribes: Unsubscribe[] = [];

  constructor(
    private readonly deps: { store: ToolPinStore; bus: EventBus; audit: AuditTrail; clock: Clock; logger: Logger },
  ) {}

  async start(): Promise<void> {
    this.unsubscribes = [
      await this.deps.bus.subscribe('tool_pins.changed', ({ providerId }) => void this.cache.delete(providerId)),
      await this.deps.bus.subscribe(
        'providers.changed',
        ({ providerId }) => void (providerId === null ? this.cache.clear() : this.cache.delete(providerId)),
      ),
    ];
  }

  async stop(): Promise<void> {
    await Promise.all(this.unsubscribes.splice(0).map((off) => off()));
  }

  /** The provider's list as served: tools whose definition matches their pin (all of them when pinning is off). */
  async apply(provider: ProviderRecord, items: ListItem[]): Promise<PinnedList> {
    const pins = await this.pinsOf(provider.id);
    if (pins.mode === 'off') return { visible: items, quarantined: NOTHING_QUARANTINED };
    const known = this.answers.get(items);
    if (known?.pins === pins) return known.list;
    const tools = items.map((item) => ({ item, tool: this.seenTool(item) }));
    const missing = missingPinnedBodies(
      pins.pins,
      new Set(tools.flatMap(({ tool }) => (tool ? [tool.definition.name] : []))),
    );
    const visible: ListItem[] = [];
    const quarantined = new Map<string, QuarantineStatus>();
    const writes: PinWrite[] = [];
    for (const { item, tool } of tools) {
      // A nameless entry is left for the list methods to drop, as without pins.
      if (tool === null) {
        visible.push(item);
        continue;
      }
      const pin = pins.pins.get(tool.definition.name);
      const decision = decidePin(pins.mode, pin, tool, pin === undefined ? (missing.get(tool.bodyHash) ?? null) : null);
      if (decision.write) writes.push(decision.write);
      if (decision.visible) visible.push(item);
      else quarantined.set(tool.definition.name, decision.status);
    }
    const list = { visible, quarantined };
    if (writes.length > 0) await this.record(provider, writes);
    else this.answers.set(items, { pins, list });
    return list;
  }

  /** Whether the provider's definitions are pinned at all (its mode is not `off`). */
  async enabledFor(providerId: string): Promise<boolean> {
    return (await this.pinsOf(providerId)).mode !== 'off';
  }

  /** The quarantine the store holds for `name` (without a list to compare: the tool gate), or null. */
  async recordedQuarantine(providerId: string, name: string): Promise<QuarantineStatus | null> {
    const pins = await this.pinsOf(providerId);
    const status = pins.mode === 'off' ? undefined : pins.pins.get(name)?.status;
    return status === undefined || status === 'pinned' ? null : status;
  }

  /** Why a call of `name` must be refused (its definition is quarantined), or null. */
  async quarantineOf(provider: ProviderRecord, items: ListItem[], name: string): Promise<QuarantineStatus | null> {
    return (await this.apply(provider, items)).quarantined.get(name) ?? null;
  }

  private pinsOf(providerId: string): Promise<ProviderPins> {
    const now = this.deps.clock.now().getTime();
    const cached = this.cache.get(providerId);
    if (cached && now - cached.at < PINS_TTL_MS) return cached.pins;
    const pins = this.deps.store.load(providerId);
    this.cache.set(providerId, { at: now, pins });
    // A failed read is not cached: the next list asks again.
    pins.catch(() => this.cache.get(providerId)?.pins === pins && this.cache.delete(providerId));
    return pins;
  }

  private seenTool(item: ListItem): SeenTool | null {
    const known = this.seen.get(item);
    if (known) return known;
    if (typeof item.name !== 'string') return null;
    const definition = definitionOf({ ...item, name: item.name });
    const tool = { definition, ...definitionHashes(definition) };
    this.seen.set(item, tool);
    return tool;
  }

  /** Writes what was seen; each write this replica wins is audited and announced (every replica then drops its cached pins). */
  private async record(provider: ProviderRecord, writes: PinWrite[]): Promise<void> {
    const at = this.deps.clock.now();
    this.cache.delete(provider.id);
    for (const write of writes) {
      if (!(await this.deps.store.apply(provider.id, write, at))) continue;
      const renamedFrom = write.kind === 'revert' ? null : write.renamedFrom;
      this.deps.logger.info(
        { providerId: provider.id, toolName: write.toolName, change: CHANGE_OF[write.kind], renamedFrom },
        'tool pin changed',
      );
      await Promise.all([
        this.audited(provider, write),
        this.deps.bus.publish('tool_pins.changed', {
          providerId: provider.id,
          tenantId: provider.tenantId,
          toolName: write.toolName,
          change: CHANGE_OF[write.kind],
          renamedFrom,
          timestamp: at.toISOString(),
        }),
      ]);
    }
  }

  /** A quarantine, a return to the pin and a rename go to the audit log (a plain first-sight pin does not: enabling pinning would write one per tool). */
  private async audited(provider: ProviderRecord, write: PinWrite): Promise<void> {
    if (write.kind === 'pin' && write.renamedFrom === null) return;
    const base = {
      userId: null,
      agentId: null,
      endUserId: null,
      providerId: provider.id,
      tenantId: provider.tenantId,
      toolName: write.toolName,
    };
    const entry =
      write.kind === 'quarantine'
        ? {
            ...base,
            status: 'rejected' as const,
            error: QUARANTINE_REASONS[write.status],
            arguments: { event: 'tool_definition_quarantined', hash: write.tool.hash, renamedFrom: write.renamedFrom },
          }
        : write.kind === 'pin'
          ? {
              ...base,
              status: 'completed' as const,
              error: null,
              arguments: { event: 'tool_definition_pinned', hash: write.tool.hash, renamedFrom: write.renamedFrom },
            }
          : {
              ...base,
              status: 'completed' as const,
              error: null,
              arguments: { event: 'tool_definition_reverted', hash: write.hash },
            };
    try {
      await this.deps.audit.open(entry);
    } catch (err) {
      this.deps.logger.error({ err, providerId: provider.id, toolName: write.toolName }, 'tool pin change not audited');
    }
  }
}
