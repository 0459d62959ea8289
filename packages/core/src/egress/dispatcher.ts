import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { Agent, buildConnector, fetch as undiciFetch, type Dispatcher } from 'undici';
import { EgressRefusedError } from '../errors.js';
import { parseIp } from './addresses.js';
import { checkAddress, checkHostName, type EgressPolicy } from './policy.js';

/** Resolves a host name to every address it has; injectable so tests can simulate rebinding. */
export type EgressResolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: EgressResolver = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

export interface EgressDispatcherOptions {
  /** Defaults to the system resolver (`dns.lookup`). */
  resolve?: EgressResolver;
  /** Connection pool settings (keep-alive, pipelining, …) for the underlying undici Agent. */
  agent?: Omit<Agent.Options, 'connect'>;
  /** TCP/TLS connect timeout (default 10 s, undici's). */
  connectTimeoutMs?: number;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An undici dispatcher that applies the egress policy at connect time: literal addresses are
 * checked before connecting, and names are resolved by our own `lookup`, which checks EVERY
 * address the name resolved to before the socket may use one. The check and the connection use
 * the same answer, so DNS rebinding (public at validation, 127.0.0.1 at connect) cannot get by.
 * Pass it as `dispatcher` to undici `request`/`fetch`; a refusal rejects with an error whose
 * cause chain holds an EgressRefusedError (see `egressRefusalOf`).
 */
export function createEgressDispatcher(policy: EgressPolicy, options: EgressDispatcherOptions = {}): Agent {
  const resolve = options.resolve ?? systemResolver;
  const lookup = (hostname: string, opts: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => {
    resolve(hostname).then(
      (all) => {
        const wanted = opts.family === 4 || opts.family === 6 ? all.filter((a) => a.family === opts.family) : all;
        const [one] = wanted;
        if (one === undefined) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
          return;
        }
        try {
          for (const a of all) checkAddress(policy, hostname, a.address);
        } catch (err) {
          callback(err as NodeJS.ErrnoException, []);
          return;
        }
        if (opts.all) callback(null, wanted);
        else callback(null, one.address, one.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
  const connector = buildConnector({ lookup, timeout: options.connectTimeoutMs });
  const connect: buildConnector.connector = (opts, callback) => {
    try {
      checkHostName(policy, opts.hostname);
      const literal = parseIp(opts.hostname);
      if (literal) checkAddress(policy, opts.hostname, literal);
    } catch (err) {
      callback(err as Error, null);
      return;
    }
    connector(opts, callback);
  };
  return new Agent({ ...options.agent, connect });
}

/** The EgressRefusedError behind a failed request (undici and fetch wrap it in `cause`), if any. */
export function egressRefusalOf(err: unknown): EgressRefusedError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof EgressRefusedError) return e;
  }
  return undefined;
}

/**
 * A `fetch` that goes through the egress dispatcher and never follows redirects (a 3xx is
 * returned as is), so a redirect cannot lead to an address the policy refuses. Refusals throw
 * the EgressRefusedError itself.
 */
export function egressFetch(dispatcher: Dispatcher): typeof fetch {
  // The cast is needed where the DOM lib is loaded (the dashboard's program reaches this file): there
  // `fetch` answers the DOM's Response, not undici's; under Node's lib alone the two are the same type.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- see above
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    try {
      return await undiciFetch(input as Parameters<typeof undiciFetch>[0], {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher,
        redirect: 'manual',
      });
    } catch (err) {
      throw egressRefusalOf(err) ?? err;
    }
  }) as unknown as typeof fetch;
}
