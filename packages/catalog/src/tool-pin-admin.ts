import { whereTenantVisible, type Principal } from '@agentgw/auth';
import {
  ConflictError,
  definitionHashes,
  NotFoundError,
  type ToolDefinition,
  type ToolPinChange,
  type ToolPinningMode,
  type ToolPinStatus,
} from '@agentgw/core';
import type { ToolPinRow } from '@agentgw/db';
import { catalogContext, type CatalogContext, type CatalogDeps } from './catalog-context.js';
import { assertTenantWritable } from './tenant-writes.js';
import { loadVisibleProvider } from './tool-providers.js';

/** A definition as it was pinned or is waiting for review. */
export interface PinnedDefinition {
  hash: string;
  definition: ToolDefinition;
}

/** One tool's pin as the admin API shows it: the approved definition, the quarantined one (for the diff), and where it stands. */
export interface ToolPin {
  providerId: string;
  providerName: string;
  tenantId: string | null;
  toolName: string;
  status: ToolPinStatus;
  pinned: PinnedDefinition | null;
  pending: (PinnedDefinition & { firstSeenAt: string }) | null;
  renamedFrom: string | null;
  approvedBy: string | null;
  approvedAt: string | null;
  updatedAt: string;
}

/** A provider's pinning mode. */
export interface ProviderPinning {
  providerId: string;
  providerName: string;
  tenantId: string | null;
  pinning: ToolPinningMode;
}

/** Which pins a listing returns: those waiting for an admin (new, changed, blocked), or all. */
export type ToolPinFilter = { state: 'quarantined' | 'all'; providerId: string | null };

/** A reviewed definition, named by the hash the reviewer saw (a definition that changed again since is a 409, not approved unseen). */
export interface ToolPinReview {
  toolName: string;
  hash: string;
}

/** Pinned-definition administration (issue 24.3); each write publishes `tool_pins.changed`, which every gateway replica acts on. */
export interface ToolPinAdmin {
  list(principal: Principal, filter: ToolPinFilter): Promise<ToolPin[]>;
  modes(principal: Principal): Promise<ProviderPinning[]>;
  setMode(principal: Principal, providerId: string, mode: ToolPinningMode): Promise<ProviderPinning>;
  /** Pins the reviewed definition: the tool is listed and callable again. */
  approve(principal: Principal, providerId: string, review: ToolPinReview): Promise<ToolPin>;
  /** Keeps the reviewed definition quarantined as `blocked` (a further change is quarantined afresh). */
  block(principal: Principal, providerId: string, review: ToolPinReview): Promise<ToolPin>;
}

const QUARANTINED: readonly ToolPinStatus[] = ['new', 'changed', 'blocked'];
/** A listing's bound: pins are per tool of visible providers, and the console shows them on one page. */
const MAX_LISTED = 1_000;

/** The pin administration over the given deps (admin-api, tests). */
export function createToolPinAdmin(deps: CatalogDeps): ToolPinAdmin {
  const ctx = catalogContext(deps);
  return {
    list: (principal, filter) => listPins(ctx, principal, filter),
    modes: (principal) => listModes(ctx, principal),
    setMode: (principal, providerId, mode) => setMode(ctx, principal, providerId, mode),
    approve: (principal, providerId, review) => reviewPin(ctx, principal, providerId, review, 'approved'),
    block: (principal, providerId, review) => reviewPin(ctx, principal, providerId, review, 'blocked'),
  };
}

async function listPins(ctx: CatalogContext, principal: Principal, filter: ToolPinFilter): Promise<ToolPin[]> {
  let query = ctx.db
    .selectFrom('tool_pins')
    .innerJoin('tool_providers', 'tool_providers.id', 'tool_pins.provider_id')
    .selectAll('tool_pins')
    .select(['tool_providers.name as provider_name', 'tool_providers.tenant_id as tenant_id'])
    .where((eb) => whereTenantVisible(eb, principal, 'tool_providers.tenant_id'));
  if (filter.state === 'quarantined') query = query.where('tool_pins.status', 'in', QUARANTINED);
  if (filter.providerId !== null) query = query.where('tool_pins.provider_id', '=', filter.providerId);
  const rows = await query.orderBy('tool_providers.name').orderBy('tool_pins.tool_name').limit(MAX_LISTED).execute();
  return rows.map((row) => toToolPin(row, row.provider_name, row.tenant_id));
}

async function listModes(ctx: CatalogContext, principal: Principal): Promise<ProviderPinning[]> {
  const rows = await ctx.db
    .selectFrom('tool_providers')
    .select(['id', 'name', 'tenant_id', 'tool_pinning'])
    .where((eb) => whereTenantVisible(eb, principal, 'tool_providers.tenant_id'))
    .orderBy('name')
    .execute();
  return rows.map((row) => ({
    providerId: row.id,
    providerName: row.name,
    tenantId: row.tenant_id,
    pinning: row.tool_pinning,
  }));
}

async function setMode(
  ctx: CatalogContext,
  principal: Principal,
  providerId: string,
  mode: ToolPinningMode,
): Promise<ProviderPinning> {
  const provider = await loadVisibleProvider(ctx.db, principal, providerId);
  assertTenantWritable(principal, provider.tenant_id, 'tool provider');
  await ctx.db
    .updateTable('tool_providers')
    .set({ tool_pinning: mode, updated_at: ctx.clock.now() })
    .where('id', '=', providerId)
    .execute();
  await announce(ctx, { providerId, tenantId: provider.tenant_id, toolName: null, change: 'mode', renamedFrom: null });
  return { providerId, providerName: provider.name, tenantId: provider.tenant_id, pinning: mode };
}

/** Approves or blocks the quarantined definition the reviewer saw, in one conditional write. */
async function reviewPin(
  ctx: CatalogContext,
  principal: Principal,
  providerId: string,
  review: ToolPinReview,
  outcome: 'approved' | 'blocked',
): Promise<ToolPin> {
  const provider = await loadVisibleProvider(ctx.db, principal, providerId);
  assertTenantWritable(principal, provider.tenant_id, 'tool provider');
  const current = await ctx.db
    .selectFrom('tool_pins')
    .selectAll()
    .where('provider_id', '=', providerId)
    .where('tool_name', '=', review.toolName)
    .executeTakeFirst();
  if (!current) throw new NotFoundError('Tool pin');
  if (
    current.pending_hash !== review.hash ||
    current.pending_definition === null ||
    !QUARANTINED.includes(current.status) ||
    (outcome === 'blocked' && current.status === 'blocked')
  ) {
    throw new ConflictError(
      'The definition is not the one waiting for review (it changed again, or was decided already): review it again',
    );
  }
  const now = ctx.clock.now();
  const approvedBy = principal.userId ?? principal.agentId;
  const update = ctx.db
    .updateTable('tool_pins')
    .where('provider_id', '=', providerId)
    .where('tool_name', '=', review.toolName)
    .where('pending_hash', '=', review.hash)
    .where('status', '=', current.status);
  const written =
    outcome === 'approved'
      ? await update
          .set({
            status: 'pinned',
            pinned_hash: review.hash,
            pinned_body_hash: definitionHashes(current.pending_definition as unknown as ToolDefinition).bodyHash,
            pinned_definition: JSON.stringify(current.pending_definition),
            pending_hash: null,
            pending_definition: null,
            pending_since: null,
            approved_by: approvedBy,
            approved_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirst()
      : await update.set({ status: 'blocked', updated_at: now }).returningAll().executeTakeFirst();
  if (!written) throw new ConflictError('The definition changed while it was being decided: review it again');
  await announce(ctx, {
    providerId,
    tenantId: provider.tenant_id,
    toolName: review.toolName,
    change: outcome,
    renamedFrom: written.renamed_from,
  });
  return toToolPin(written, provider.name, provider.tenant_id);
}

function announce(
  ctx: CatalogContext,
  event: {
    providerId: string;
    tenantId: string | null;
    toolName: string | null;
    change: ToolPinChange;
    renamedFrom: string | null;
  },
): Promise<void> {
  return ctx.bus.publish('tool_pins.changed', { ...event, timestamp: ctx.clock.now().toISOString() });
}

function toToolPin(row: ToolPinRow, providerName: string, tenantId: string | null): ToolPin {
  return {
    providerId: row.provider_id,
    providerName,
    tenantId,
    toolName: row.tool_name,
    status: row.status,
    pinned:
      row.pinned_hash !== null && row.pinned_definition !== null
        ? { hash: row.pinned_hash, definition: row.pinned_definition as unknown as ToolDefinition }
        : null,
    pending:
      row.pending_hash !== null && row.pending_definition !== null
        ? {
            hash: row.pending_hash,
            definition: row.pending_definition as unknown as ToolDefinition,
            firstSeenAt: (row.pending_since ?? row.updated_at).toISOString(),
          }
        : null,
    renamedFrom: row.renamed_from,
    approvedBy: row.approved_by,
    approvedAt: row.approved_at?.toISOString() ?? null,
    updatedAt: row.updated_at.toISOString(),
  };
}
