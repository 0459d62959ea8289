import { isIP } from 'node:net';
import { z } from 'zod';
import { parseCidr } from './egress/addresses.js';
import { parseEgressAllow } from './egress/policy.js';

/** Default issuer when JWT_ISSUER is unset (the spec asks for `<name>-gateway`). */
export const DEFAULT_JWT_ISSUER = 'agentgw-gateway';

const duration = /^\d+\s*(ms|s|m|h|d|w|y)?$/i;

/** The gateway's client registration at an external issuer, for "continue with" on the sign-in page (OIDC code + PKCE). */
const externalLogin = z
  .object({
    // In the console's URLs (/interactions/<uid>/external/<id>), so a short slug.
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'login.id must be a lowercase slug (a-z, 0-9, -; at most 40)'),
    name: z.string().min(1).max(60).optional(),
    clientId: z.string().min(1),
    clientSecret: z.string().min(1, 'login.clientSecret is required'),
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'login.scopes items must be scope tokens'))
      .optional(),
  })
  .strict();

const externalIssuer = z
  .object({
    issuer: z.string().min(1),
    // Required: without it a token the issuer minted for any other application would be accepted here.
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
      error: 'audience is required for every external issuer',
    }),
    jwksUri: z.url().optional(),
    secret: z.string().min(32, 'secret must be at least 32 characters').optional(),
    login: externalLogin.optional(),
  })
  .refine((v) => Boolean(v.jwksUri) !== Boolean(v.secret), {
    message: 'each item needs exactly one of jwksUri or secret',
  })
  // An interactive login discovers the issuer's metadata at its URL: a shared-secret issuer is no OpenID provider.
  .refine((v) => v.login === undefined || (v.jwksUri !== undefined && URL.canParse(v.issuer)), {
    message: 'login needs an issuer URL with jwksUri (an OpenID provider)',
  });
export type ExternalIssuer = z.infer<typeof externalIssuer>;

/** Two logins with one id would make the console's "continue with" ambiguous. */
const uniqueLoginIds = (items: ExternalIssuer[], ctx: z.RefinementCtx) => {
  const ids = items.flatMap((i) => (i.login ? [i.login.id] : []));
  if (new Set(ids).size !== ids.length) ctx.addIssue({ code: 'custom', message: 'must not repeat a login.id' });
};

const jsonArrayOf = <T extends z.ZodType>(item: T) =>
  z.string().transform((raw, ctx) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'is not valid JSON' });
      return z.NEVER;
    }
    const result = z.array(item).safeParse(parsed);
    if (!result.success) {
      const first = result.error.issues[0];
      const where = first?.path.length ? ` at [${first.path.join('.')}]` : '';
      ctx.addIssue({
        code: 'custom',
        message: `must be a JSON array of issuer configs${where}: ${first?.message ?? 'invalid'}`,
      });
      return z.NEVER;
    }
    return result.data;
  });

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

/** A comma-separated list; blanks dropped, unset is empty. */
const commaList = optionalString.transform((v) =>
  v === undefined
    ? []
    : v
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean),
);

/** A 32-byte key as 64 hex characters. */
const hexKey = z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)');

/** Retired keys, comma-separated; unset is none. */
const hexKeyList = optionalString
  .refine((v) => v === undefined || v.split(',').every((k) => /^[0-9a-fA-F]{64}$/.test(k.trim())), {
    message: 'must be a comma-separated list of 64-hex-character keys',
  })
  .transform((v) => (v === undefined ? [] : v.split(',').map((k) => k.trim())));

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  JWT_SECRET: z.string({ error: 'is required' }).min(32, 'must be at least 32 characters'),
  JWT_PUBLIC_KEY: optionalString.refine((v) => v === undefined || v.includes('-----BEGIN PUBLIC KEY-----'), {
    message: 'must be a PEM public key (-----BEGIN PUBLIC KEY-----)',
  }),
  JWT_ISSUER: optionalString.transform((v) => v ?? DEFAULT_JWT_ISSUER),
  JWT_AUDIENCE: optionalString,
  JWT_EXPIRES_IN: z.string().regex(duration, 'must be a duration such as 3600, 15m, 24h or 7d').default('24h'),
  JWT_EXTERNAL_ISSUERS: optionalString
    .pipe(jsonArrayOf(externalIssuer).optional())
    .transform((v) => v ?? [])
    .superRefine(uniqueLoginIds),
  /** Outbound connections: `public-only` refuses private/loopback; unset means public-only in production only. */
  EGRESS_POLICY: z.enum(['public-only', 'allow-private'], { error: 'must be public-only or allow-private' }).optional(),
  /** Comma-separated CIDRs, addresses and host names always reachable (link-local and metadata included). */
  EGRESS_ALLOW: commaList.superRefine((list, ctx) => {
    try {
      parseEgressAllow(list);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  }),
  /** Comma-separated CIDRs of reverse proxies whose X-Forwarded-For is believed; empty trusts none. */
  TRUSTED_PROXIES: commaList.refine((list) => list.every((c) => parseCidr(c) !== undefined), {
    message: 'must be a comma-separated list of CIDR blocks or IP addresses',
  }),
  /** Lifetime of the access tokens the gateway's OAuth authorization server issues to MCP clients (seconds; refresh tokens renew them). */
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(5, 'must be at least 5')
    .max(86_400, 'must be at most 86400')
    .default(600),
  /** Requests one client address may make to the OAuth authorization endpoints (/oauth/*) per minute. */
  OAUTH_MAX_PER_ADDRESS: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(100_000, 'must be at most 100000')
    .default(120),
  /** Login attempts one account (email) may make per LOGIN_WINDOW_MS; a successful login clears them. */
  LOGIN_MAX_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(1_000, 'must be at most 1000')
    .default(5),
  /** Failed logins one client address may make per LOGIN_WINDOW_MS (successful ones are given back). */
  LOGIN_MAX_PER_ADDRESS: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(100_000, 'must be at most 100000')
    .default(20),
  /** The fixed window of LOGIN_MAX_PER_ACCOUNT and LOGIN_MAX_PER_ADDRESS. */
  LOGIN_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1_000, 'must be at least 1000')
    .max(86_400_000, 'must be at most a day')
    .default(900_000),
  /** Strict-Transport-Security max-age sent on every answer; 0 (default) sends none. Set it only when clients reach the gateway over TLS. */
  HSTS_MAX_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(0, 'must be 0 (off) or more')
    .max(63_072_000, 'must be at most 2 years')
    .default(0),
  /** Invoke and MCP calls one agent may make per RATE_LIMIT_WINDOW_MS, across replicas; 0 (default) is unlimited. */
  RATE_LIMIT_AGENT: z.coerce
    .number()
    .int()
    .min(0, 'must be 0 (unlimited) or more')
    .max(10_000_000, 'must be at most 10000000')
    .default(0),
  /** Invoke and MCP calls one tenant (or a tenant-less user's private scope) may make per RATE_LIMIT_WINDOW_MS; 0 (default) is unlimited. */
  RATE_LIMIT_TENANT: z.coerce
    .number()
    .int()
    .min(0, 'must be 0 (unlimited) or more')
    .max(10_000_000, 'must be at most 10000000')
    .default(0),
  /** When set, `GET /metrics` on the public port answers only `Authorization: Bearer <METRICS_TOKEN>`; unset, it answers 404 there. */
  METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  /** When set, `GET /metrics` is also served, without a token, on 127.0.0.1:METRICS_PORT only. */
  METRICS_PORT: z.coerce
    .number()
    .int()
    .min(1, 'must be a port from 1 to 65535')
    .max(65535, 'must be a port from 1 to 65535')
    .optional(),
  /** Bound of a graceful shutdown: in-flight calls and streams get this long after SIGTERM, then their connections are cut. */
  SHUTDOWN_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0, 'must be 0 or more')
    .max(600_000, 'must be at most 10 minutes')
    .default(10_000),
  /** The fixed window of RATE_LIMIT_AGENT and RATE_LIMIT_TENANT. */
  RATE_LIMIT_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1_000, 'must be at least 1000')
    .max(86_400_000, 'must be at most a day')
    .default(60_000),
  ADMIN_EMAIL: optionalString.pipe(z.email('must be an email address').optional()),
  ADMIN_PASSWORD: optionalString.pipe(z.string().min(8, 'must be at least 8 characters').optional()),
  DATABASE_URL: optionalString.refine((v) => v === undefined || /^(file:|postgres:\/\/|postgresql:\/\/)/.test(v), {
    message: 'must start with file:, postgres:// or postgresql://',
  }),
  /**
   * PostgreSQL connections one process keeps at most (its pg pool). Behind PgBouncer in
   * transaction pooling, replicas x this is the pooler's client count, not the server's.
   */
  DATABASE_POOL_MAX: z.coerce.number().int().min(1, 'must be at least 1').max(200, 'must be at most 200').default(10),
  /** The vault's key for users' credentials; only the vault (and the all-in-one) holds it (service-kit's SERVICE_KEYS). */
  CREDENTIAL_ENCRYPTION_KEY: optionalString.pipe(hexKey.optional()),
  /** Retired vault keys, still accepted for reading until the vault has re-encrypted every row. */
  CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: hexKeyList,
  /** Agents', providers' and credential providers' secrets, MCP session ids and audit ids; every service that uses them. */
  PLATFORM_SECRETS_KEY: optionalString.pipe(hexKey.optional()),
  /** Retired platform keys, still accepted until `reencrypt` has re-sealed every platform secret. */
  PLATFORM_SECRETS_PREVIOUS_KEYS: hexKeyList,
  PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Listening address: unset, the all-in-one binds 127.0.0.1 and a service every interface; images set 0.0.0.0. */
  HOST: optionalString.refine((v) => v === undefined || v === 'localhost' || isIP(v) !== 0, {
    message: 'must be an IP address (127.0.0.1, 0.0.0.0, ::) or localhost',
  }),
  GATEWAY_PUBLIC_URL: optionalString.pipe(z.url('must be a URL').optional()),
  OAUTH_CALLBACK_BASE_URL: optionalString.pipe(z.url('must be a URL').optional()),
  /** How long a started OAuth connection (login, consent at the service) may take before its state is refused. */
  OAUTH_FLOW_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000, 'must be at least 1000')
    .max(3_600_000, 'must be at most an hour')
    .default(600_000),
  MCP_SERVER_URL: z.url('must be a URL').default('http://localhost:8080'),
  /** Browser origins the MCP endpoints accept (DNS-rebinding protection); `*` for any. Unset: loopback and GATEWAY_PUBLIC_URL. */
  MCP_ALLOWED_ORIGINS: commaList.refine((list) => list.every((o) => o === '*' || /^https?:\/\/[^/]+$/.test(o)), {
    message: 'must be a comma-separated list of origins such as https://app.example.com, or *',
  }),
  /** Deadline of one upstream MCP call (tools/call and forwarded methods). */
  MCP_UPSTREAM_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100, 'must be at least 100')
    .max(3_600_000, 'must be at most an hour')
    .default(60_000),
  /** Per-upstream deadline of a tools/list fan-out: a slower upstream is left out of that answer. */
  MCP_LIST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(50, 'must be at least 50')
    .max(600_000, 'must be at most 10 minutes')
    .default(5_000),
  REDIS_URL: optionalString.refine((v) => v === undefined || /^rediss?:\/\//.test(v), {
    message: 'must start with redis:// or rediss://',
  }),
  /**
   * Redis Cluster seed nodes (`host:port,host:port`): set, every Redis user connects to the cluster
   * (auth and TLS still come from REDIS_URL, which must be set too); unset, REDIS_URL is one server.
   */
  REDIS_CLUSTER_NODES: commaList.pipe(
    z
      .array(z.string().regex(/^[A-Za-z0-9.\-_]+:\d{1,5}$|^\[[0-9A-Fa-f:.]+\]:\d{1,5}$/, 'must list host:port seeds'))
      .max(64, 'must list at most 64 seeds'),
  ),
  /** Distributed mode: where invoke-proxy reaches the vault's internal API. */
  VAULT_URL: optionalString.pipe(z.url('must be a URL').optional()),
  ALLOW_SELF_REGISTRATION: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default('true')
    .transform((v) => v === 'true'),
  /** How long a tool call is held for a confirmation before it is rejected as timed out (spec: 5 minutes). */
  CONFIRMATION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100, 'must be at least 100')
    .max(86_400_000, 'must be at most a day')
    .default(300_000),
  /** Decided confirmations older than this many days are deleted hourly by the confirmation hub; 0 keeps them forever. */
  CONFIRMATION_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0, 'must be 0 (keep forever) or more')
    .max(36_500, 'must be at most 36500')
    .default(30),
  /** Pending confirmations one agent, and one end user, may have at once; one more hold is refused with 429. */
  CONFIRMATION_MAX_PENDING_PER_AGENT: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(10_000, 'must be at most 10000')
    .default(20),
  CONFIRMATION_MAX_PENDING_PER_USER: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(10_000, 'must be at most 10000')
    .default(20),
  /** Interval of `heartbeat` events on the SSE stream (spec: 30 seconds). */
  SSE_HEARTBEAT_MS: z.coerce
    .number()
    .int()
    .min(100, 'must be at least 100')
    .max(3_600_000, 'must be at most an hour')
    .default(30_000),
  /** APNs push (iOS/macOS devices): off unless team id, key id, key and topic are all set. */
  APNS_TEAM_ID: optionalString,
  APNS_KEY_ID: optionalString,
  /** The .p8 signing key (PEM; `\n` escapes allowed). */
  APNS_PRIVATE_KEY: optionalString,
  /** The app's bundle id (`apns-topic`). */
  APNS_TOPIC: optionalString,
  APNS_ENVIRONMENT: z.enum(['production', 'sandbox'], { error: 'must be production or sandbox' }).default('production'),
  /** Overrides the APNs host chosen by APNS_ENVIRONMENT (a proxy, or a test fake). */
  APNS_URL: optionalString.pipe(z.url('must be a URL').optional()),
  /** FCM HTTP v1 push (Android devices): the service-account JSON key; off when unset. */
  FCM_SERVICE_ACCOUNT: optionalString,
  /** Overrides the FCM API base URL (default https://fcm.googleapis.com). */
  FCM_URL: optionalString.pipe(z.url('must be a URL').optional()),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` lines, or `pretty` text; unset: text on a terminal (outside production), JSON otherwise. */
  LOG_FORMAT: z.enum(['json', 'pretty'], { error: 'must be json or pretty' }).optional(),
  /** One `info` line per request (method, route, status, duration, request id, caller, bytes). */
  ACCESS_LOG: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
  /** Share of requests the access log writes (0..1). */
  ACCESS_LOG_SAMPLE: z.coerce
    .number({ error: 'must be a number from 0 to 1' })
    .min(0, 'must be from 0 to 1')
    .max(1, 'must be from 0 to 1')
    .default(1),
  /** Audit entries older than this many days (by when they were written) are deleted hourly; 0 keeps them forever. */
  AUDIT_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0, 'must be 0 (keep forever) or more')
    .max(36_500, 'must be at most 36500')
    .default(0),
  /** Audit jobs the writer takes per transaction. */
  AUDIT_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(5_000, 'must be at most 5000')
    .default(1_000),
  /**
   * How long the writer waits for a batch to fill before writing what it has. Reads do not wait
   * it out (a query's read-your-writes barrier hands over what is there). 100 cost the all-in-one
   * ~20 MB more loaded memory than 50 for little CPU (issue 32, eighteenth pass).
   */
  AUDIT_BATCH_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0, 'must be at least 0')
    .max(10_000, 'must be at most 10000')
    .default(50),
  /** Audit batches a writer has in flight on PostgreSQL (the embedded database writes one at a time). */
  AUDIT_WRITE_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(16, 'must be at most 16')
    .default(4),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super('Invalid configuration:\n' + problems.map((p) => `  - ${p.variable} ${p.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}

/** Parses configuration; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // A blank variable (`PORT=` in an env file, `${VAR:-}` in compose) counts as unset, so its
  // default applies; otherwise PORT= would coerce to 0 and JWT_EXPIRES_IN= would be rejected.
  const set = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const result = configSchema.safeParse(set);
  if (result.success) return result.data;
  const seen = new Set<string>();
  const problems: { variable: string; message: string }[] = [];
  for (const issue of result.error.issues) {
    const variable = String(issue.path[0] ?? 'configuration');
    if (seen.has(variable)) continue;
    seen.add(variable);
    problems.push({ variable, message: issue.message });
  }
  throw new ConfigError(problems);
}
