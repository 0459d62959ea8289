import { DependencyUnavailableError } from '@agentgw/core';
import type { CatalogContext } from './catalog-context.js';

/** Whose secret it is: names the log line and the 503 when no configured key opens it. */
export type SecretOwner = 'agent' | 'provider';

const UNOPENABLE: Record<SecretOwner, string> = {
  agent: 'The agent upstream secret cannot be decrypted; set it again',
  provider: "The tool provider's auth secret cannot be decrypted; set it again",
};

/**
 * A sealed secret's plaintext, or null when none is stored. A secret no configured key opens is
 * refused (503, logged without the value) rather than silently left out.
 */
export function openSealed(
  ctx: CatalogContext,
  owner: SecretOwner,
  ownerId: string,
  sealed: string | null,
): string | null {
  if (sealed === null) return null;
  const secret = ctx.secrets.open(sealed, ownerId);
  if (secret === null) {
    ctx.logger.error({ owner, ownerId }, 'secret cannot be unsealed with the configured keys');
    throw new DependencyUnavailableError(UNOPENABLE[owner]);
  }
  return secret;
}

/**
 * Secrets opened once per cached record: the plaintext lives beside the record (never on it, so
 * a record that is logged carries none) and goes with it when an event or the TTL replaces it.
 */
export class OpenedSecrets<R extends object> {
  private readonly opened = new WeakMap<R, string | null>();

  constructor(
    private readonly ctx: CatalogContext,
    private readonly owner: SecretOwner,
    private readonly sealedOf: (record: R) => { id: string; sealed: string | null },
  ) {}

  /** The plaintext of the record's secret, opened on first use; an unopenable one is a 503 every time. */
  of(record: R): string | null {
    const known = this.opened.get(record);
    if (known !== undefined) return known;
    const { id, sealed } = this.sealedOf(record);
    const secret = openSealed(this.ctx, this.owner, id, sealed);
    this.opened.set(record, secret); // not reached for an unopenable secret: it is refused (and logged) each time
    return secret;
  }
}
