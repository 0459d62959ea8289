import type { ToolPinningMode } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Insertable, Kysely } from 'kysely';
import type { PinState, PinWrite } from './pin-decisions.js';

/** A provider's pinning mode and its tools' pins, as read together. */
export interface ProviderPins {
  mode: ToolPinningMode;
  pins: ReadonlyMap<string, PinState>;
}

/**
 * The tool_pins rows the gateway reads and writes (the admin API approves and blocks in its own
 * module). Every write is conditional on the row being as the decision read it, so when several
 * replicas see the same change one write wins and only its replica announces it.
 */
export class ToolPinStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The provider's mode and pins; `off` for a provider that is gone. */
  async load(providerId: string): Promise<ProviderPins> {
    const provider = await this.db
      .selectFrom('tool_providers')
      .select('tool_pinning')
      .where('id', '=', providerId)
      .executeTakeFirst();
    if (!provider || provider.tool_pinning === 'off') return { mode: 'off', pins: new Map() };
    const rows = await this.db
      .selectFrom('tool_pins')
      .select(['tool_name', 'status', 'pinned_hash', 'pinned_body_hash', 'pending_hash'])
      .where('provider_id', '=', providerId)
      .execute();
    const pins = new Map<string, PinState>();
    for (const row of rows) {
      pins.set(row.tool_name, {
        toolName: row.tool_name,
        status: row.status,
        pinnedHash: row.pinned_hash,
        pinnedBodyHash: row.pinned_body_hash,
        pendingHash: row.pending_hash,
      });
    }
    return { mode: provider.tool_pinning, pins };
  }

  /** Applies one decided change; true when this call made it (false: another replica did first, or the row moved on). */
  async apply(providerId: string, write: PinWrite, at: Date): Promise<boolean> {
    switch (write.kind) {
      case 'pin': {
        const { tool } = write;
        return this.insertFirstRow(providerId, write, at, {
          status: 'pinned',
          pinned_hash: tool.hash,
          pinned_body_hash: tool.bodyHash,
          pinned_definition: JSON.stringify(tool.definition),
        });
      }
      case 'quarantine':
        if (write.exists) return this.quarantineExisting(providerId, write, at);
        return this.insertFirstRow(providerId, write, at, {
          status: 'new',
          pending_hash: write.tool.hash,
          pending_definition: JSON.stringify(write.tool.definition),
          pending_since: at,
        });
      case 'revert': {
        const row = await this.db
          .updateTable('tool_pins')
          .set({ status: 'pinned', pending_hash: null, pending_definition: null, pending_since: null, updated_at: at })
          .where('provider_id', '=', providerId)
          .where('tool_name', '=', write.toolName)
          .where('pinned_hash', '=', write.hash)
          .where('status', '<>', 'pinned')
          .returning('tool_name')
          .executeTakeFirst();
        return row !== undefined;
      }
    }
  }

  /** Inserts a tool's first row in `state` (pinned or new); false when the row is already there (another replica wrote it first). */
  private async insertFirstRow(
    providerId: string,
    write: { toolName: string; renamedFrom: string | null },
    at: Date,
    state: Omit<
      Insertable<Database['tool_pins']>,
      'provider_id' | 'tool_name' | 'renamed_from' | 'created_at' | 'updated_at'
    >,
  ): Promise<boolean> {
    const row = await this.db
      .insertInto('tool_pins')
      .values({
        provider_id: providerId,
        tool_name: write.toolName,
        renamed_from: write.renamedFrom,
        created_at: at,
        updated_at: at,
        ...state,
      })
      .onConflict((oc) => oc.columns(['provider_id', 'tool_name']).doNothing())
      .returning('tool_name')
      .executeTakeFirst();
    return row !== undefined;
  }

  private async quarantineExisting(
    providerId: string,
    write: Extract<PinWrite, { kind: 'quarantine' }>,
    at: Date,
  ): Promise<boolean> {
    const { hash } = write.tool;
    const row = await this.db
      .updateTable('tool_pins')
      .set({
        status: write.status,
        pending_hash: hash,
        pending_definition: JSON.stringify(write.tool.definition),
        pending_since: at,
        updated_at: at,
      })
      .where('provider_id', '=', providerId)
      .where('tool_name', '=', write.toolName)
      .where((eb) =>
        eb.and([eb('pending_hash', 'is distinct from', hash), eb('pinned_hash', 'is distinct from', hash)]),
      )
      .returning('tool_name')
      .executeTakeFirst();
    return row !== undefined;
  }
}
