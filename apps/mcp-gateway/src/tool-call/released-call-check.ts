import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { isAppError, matchGlob } from '@agentgw/core';
import { denialReason, mayReach, NO_PROVIDER_ACCESS, toolPolicy, type ToolCallCatalog } from './tool-access.js';

/** Why a released call is refused whose name no longer goes to the provider it was confirmed for. */
export const NOT_THIS_PROVIDER = 'The tool no longer goes to this provider';

/** Proves again who is calling: the request's own credentials, authenticated anew. */
export type Reauthenticate = () => Promise<Principal>;

/** A released call goes ahead as the fresh principal to the fresh provider record, or is refused with a reason. */
export type Release = { ok: true; principal: Principal; provider: ProviderRecord } | { ok: false; reason: string };

/** What a released call is checked against; `locate` finds the provider the name goes to for a principal (null: none). */
export interface ReleasedCall {
  principal: Principal;
  reauthenticate: Reauthenticate;
  providerId: string;
  toolName: string;
  locate: (principal: Principal) => Promise<ProviderRecord | null>;
}

/**
 * Re-checks a call a human approved (or whose approval token was redeemed) before it goes out:
 * the wait can be long, and an approval is for the call, not for whatever the caller's standing
 * has become. The credentials must still authenticate as the same user, end user and agent (a
 * deleted user, a password change, a rotated runtime token or a revoked API key fails here), the
 * agent must still be active (the kill switch), the name must still go to the same provider, the
 * agent must still reach it, and the policy must not deny it now. Reads are the catalog's caches,
 * dropped by the admin writes' events, so nothing older than the last change decides.
 */
export async function recheckReleasedCall(catalog: ToolCallCatalog, call: ReleasedCall): Promise<Release> {
  let principal: Principal;
  try {
    principal = await call.reauthenticate();
  } catch (err) {
    if (!isAppError(err)) throw err;
    // The kill switch says so in its own words; anything else is the credentials' standing.
    return {
      ok: false,
      reason: err.code === 'AGENT_DISABLED' ? err.message : `The caller's credentials no longer hold: ${err.message}`,
    };
  }
  const before = call.principal;
  if (
    principal.userId !== before.userId ||
    principal.endUserId !== before.endUserId ||
    principal.agentId !== before.agentId
  ) {
    return { ok: false, reason: 'The caller changed while the call was held' };
  }
  if (principal.agentId !== null) {
    const agent = await catalog.agents.get(principal.agentId);
    if (!agent || !agent.isActive) return { ok: false, reason: 'Agent is disabled' };
  }
  const provider = await call.locate(principal);
  if (!provider || provider.id !== call.providerId || !matchGlob(provider.pattern, call.toolName)) {
    return { ok: false, reason: NOT_THIS_PROVIDER };
  }
  if (!(await mayReach(catalog, principal, provider.id))) return { ok: false, reason: NO_PROVIDER_ACCESS };
  const decision = await toolPolicy(catalog, principal, provider.id, call.toolName);
  if (decision.action === 'deny') return { ok: false, reason: denialReason(decision) };
  return { ok: true, principal, provider };
}

/** The provider the principal may address by id, or null (unknown, deleted, another tenant's). */
export async function addressableProvider(
  catalog: ToolCallCatalog,
  principal: Principal,
  providerId: string,
): Promise<ProviderRecord | null> {
  try {
    return await catalog.providers.getFor(principal, providerId);
  } catch (err) {
    if (isAppError(err) && err.status === 404) return null;
    throw err;
  }
}
