import type { ProviderRecord } from '@agentgw/catalog';
import type { Logger } from '@agentgw/core';

type Result = Record<string, unknown>;

/** The result `_meta` key naming the providers a merged answer had to leave out. */
export const META_LEFT_OUT = 'agentgw/leftOut';
/** Distinct (provider, reason) pairs remembered as logged; past it the memory starts again. */
const MAX_LOGGED = 1_000;

/** A provider missing from a merged answer and why (its list could not be had: unreachable, refused by the egress policy, not MCP, …). */
export interface LeftOut {
  providerId: string;
  name: string;
  reason: string;
  /** Where the caller connects their account first, for a provider that lists only with their own credential. */
  authUrl?: string;
}

/**
 * Names the providers a merged list left out, so none is dropped silently: in the result's
 * `_meta["agentgw/leftOut"]` and in the log (a warning once per provider and reason, not per
 * request). The result as it is when nothing was left out.
 */
export class LeftOutProviders {
  private readonly logged = new Set<string>();

  constructor(private readonly logger: Logger) {}

  named(result: Result, leftOut: readonly LeftOut[]): Result {
    if (leftOut.length === 0) return result;
    for (const one of leftOut) this.log(one);
    const meta = typeof result._meta === 'object' && result._meta !== null ? (result._meta as Result) : {};
    return { ...result, _meta: { ...meta, [META_LEFT_OUT]: leftOut } };
  }

  private log(one: LeftOut): void {
    const key = `${one.providerId}\n${one.reason}`;
    if (this.logged.has(key)) return;
    if (this.logged.size >= MAX_LOGGED) this.logged.clear();
    this.logged.add(key);
    this.logger.warn(
      { providerId: one.providerId, provider: one.name, reason: one.reason },
      'provider left out of a merged list',
    );
  }
}

/** A provider and its list's failure as one LeftOut entry. */
export const leftOutOf = (provider: ProviderRecord, reason: string): LeftOut => ({
  providerId: provider.id,
  name: provider.name,
  reason: reason.slice(0, 300),
});
