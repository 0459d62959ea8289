import { secretBoxFor, type SecretBox } from '@agentgw/auth';
import {
  connectRedis,
  createEgressDispatcher,
  egressFetch,
  egressPolicyFromConfig,
  redisTargetFrom,
  type Clock,
  type Config,
  type Logger,
} from '@agentgw/core';
import { boundedFetch } from './bounded-fetch.js';
import { OAuthClient } from './oauth-client.js';
import { MemoryRefreshLock, RedisRefreshLock, type RefreshLock } from './refresh-lock.js';

/** What the vault needs to keep OAuth tokens fresh: the client, the key that opens providers' client secrets, the refresh lock. */
export interface VaultOAuth {
  client: OAuthClient;
  /** PLATFORM_SECRETS_KEY's ring: credential providers' client secrets are sealed under it by admin-api. */
  secrets: SecretBox;
  lock: RefreshLock;
}

/**
 * One in-process lock for every vault instance of the process: the all-in-one builds several (the
 * vault's routes, invoke-proxy, mcp-gateway) over one database, and they must refresh a token once.
 */
const PROCESS_LOCK = new MemoryRefreshLock();

/** The largest answer read from an authorization server (metadata and token answers are a few KiB). */
const MAX_ANSWER_BYTES = 256 * 1024;

/**
 * The vault's OAuth runtime for one process: the client (its calls to authorization servers go
 * through the egress policy: a provider's issuer or token URL may point anywhere), the platform
 * key ring that opens providers' client secrets, and the refresh lock (Redis when REDIS_URL is
 * set, so replicas refresh a token once; in-process otherwise; its connection opens at the first
 * refresh). `close()` releases it.
 */
export function createVaultOAuth(deps: {
  config: Config;
  clock: Clock;
  logger: Logger;
  lock?: RefreshLock;
}): VaultOAuth & { close(): Promise<void> } {
  const { config, clock, logger } = deps;
  const fetch = boundedFetch(egressFetch(createEgressDispatcher(egressPolicyFromConfig(config))), MAX_ANSWER_BYTES);
  const redis = redisTargetFrom(config);
  const lock =
    deps.lock ??
    (redis ? new RedisRefreshLock(connectRedis(redis, { maxRetriesPerRequest: 2, lazyConnect: true })) : PROCESS_LOCK);
  return {
    client: new OAuthClient(fetch, clock, logger),
    secrets: secretBoxFor(config),
    lock,
    close: () => (lock === PROCESS_LOCK ? Promise.resolve() : lock.close()),
  };
}
