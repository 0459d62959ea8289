import type { AuthService } from '@agentgw/auth';
import {
  createEgressDispatcher,
  DependencyUnavailableError,
  exchange,
  withAllowedHosts,
  type EgressPolicy,
  type Exchanged,
  type ExchangeRequest,
  type ExchangeOptions,
} from '@agentgw/core';
import { Agent, type Dispatcher } from 'undici';
import { z } from 'zod';
import type { UpstreamRecipient } from './credential-recipients.js';
import type { CredentialResolution, Vault } from './vault.js';

/** Header carrying the service token on the vault's internal API. */
export const SERVICE_TOKEN_HEADER = 'X-Service-Token';
/** Audience of the service tokens the vault accepts. */
export const VAULT_AUDIENCE = 'vault';

/**
 * How invoke-proxy gets a user's credentials: in the all-in-one a direct call into the vault,
 * in distributed mode an HTTP call to the vault's internal resolve endpoint (so the vault's
 * process is the one that opens them).
 */
export interface CredentialResolver {
  /** The credentials of `userId` (of `tenantId`) that `recipient` may receive. */
  resolve(input: {
    userId: string;
    tenantId: string | null;
    serviceTypes: string[];
    recipient: UpstreamRecipient;
  }): Promise<CredentialResolution>;
}

/** All-in-one: invoke-proxy calls the vault in the same process. */
export function directCredentialResolver(vault: Vault): CredentialResolver {
  return { resolve: (input) => vault.resolve(input) };
}

const resolutionSchema = z.object({
  credentials: z.record(z.string(), z.string()),
  missing: z.array(z.string()),
  authUrls: z.record(z.string(), z.string()),
});

export interface HttpCredentialResolverOptions {
  /** The vault's base URL, e.g. `http://vault:7604`. */
  baseUrl: string;
  auth: Pick<AuthService, 'signServiceToken'>;
  /** Bound on each phase of the call (connecting, the answer's headers, silence in its body); the default suits an in-cluster hop. */
  timeoutMs?: number;
  /** Name the calling service signs its tokens with. */
  service?: string;
  /**
   * The egress policy: the call goes through it with the vault's own host always allowed (the
   * operator configured it, and it is usually a private address); redirects are not followed.
   */
  egress?: EgressPolicy;
}

const DEFAULT_TIMEOUT_MS = 5_000;
const TOKEN_REUSE_MS = 45_000;
/** The vault's answer holds one user's credentials for one call: far below this; anything larger is refused. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** The vault's answer is collected whole, under 1 MiB (a larger one aborts the call). */
const vaultAnswer: ExchangeOptions = {
  maxBytes: MAX_ANSWER_BYTES,
  tooLarge: (maxBytes) => new Error(`the vault's answer exceeds ${maxBytes} bytes`),
  bodyMode: () => 'collect',
};

/**
 * Distributed mode: resolves through the vault's internal endpoint with a short-lived service
 * token. Any failure (unreachable, timeout, non-2xx, malformed answer) is a 503: the caller must
 * not treat "vault down" as "credentials missing".
 */
export function httpCredentialResolver(options: HttpCredentialResolverOptions): CredentialResolver {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/internal/v1/credentials/resolve`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // The request is built field by field per call: made by spreading, it cost undici several times more to take in (measured).
  const endpoint = { origin: url.origin, path: `${url.pathname}${url.search}` };
  // One keep-alive pool to the vault; undici's own timers bound the call (no AbortSignal, body
  // stream or web Request/Response per invoke). Redirects are never followed: a 3xx is a failure like any non-2xx.
  const dispatcher: Dispatcher = options.egress
    ? createEgressDispatcher(withAllowedHosts(options.egress, [url.hostname]), { connectTimeoutMs: timeoutMs })
    : new Agent({ connect: { timeout: timeoutMs } });
  // Service tokens live 60 s; reuse one for 45 s instead of signing (and verifying) per invoke.
  let cached: { token: string; renewAt: number } | undefined;
  const serviceToken = async (): Promise<string> => {
    const now = Date.now();
    if (!cached || cached.renewAt <= now) {
      cached = {
        token: await options.auth.signServiceToken(options.service ?? 'invoke-proxy', VAULT_AUDIENCE),
        renewAt: now + TOKEN_REUSE_MS,
      };
    }
    return cached.token;
  };
  return {
    async resolve(input) {
      const headers = ['content-type', 'application/json', SERVICE_TOKEN_HEADER, await serviceToken()];
      let answer: Exchanged;
      try {
        const request: ExchangeRequest = {
          origin: endpoint.origin,
          path: endpoint.path,
          method: 'POST',
          headers,
          body: JSON.stringify(input),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        };
        answer = await exchange(dispatcher, request, vaultAnswer);
      } catch {
        throw new DependencyUnavailableError('Credential vault is unreachable');
      }
      if (answer.status < 200 || answer.status >= 300 || answer.body === null)
        throw new DependencyUnavailableError(`Credential vault answered HTTP ${answer.status}`);
      let body: unknown;
      try {
        body = JSON.parse(answer.body.toString('utf8'));
      } catch {
        body = undefined;
      }
      const parsed = resolutionSchema.safeParse(body);
      if (!parsed.success) throw new DependencyUnavailableError('Credential vault sent an invalid answer');
      return parsed.data;
    },
  };
}
