import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { startMcpServer, type McpFixture } from './mcp-server.js';
import { readBody } from './read-body.js';

export interface ProtectedMcpServerOptions {
  /** The authorization server whose access tokens are accepted (their signature checked against its JWKS). */
  issuer: string;
  jwksUri: string;
  /** This server's resource identifier: the tokens' required audience (RFC 8707), published in its metadata. */
  resource: string;
  /**
   * Methods answered without a token. Default: none — as the MCP authorization spec has it, every
   * request (initialize and tools/list too) needs the user's token. A test of a server that lists
   * publicly names them (e.g. `['initialize', 'notifications/initialized', 'tools/list']`).
   */
  publicMethods?: readonly string[];
  /**
   * More tools listed to (and callable by) a token's subject beside `whoami`, so users see
   * different tool sets; each answers `<name> for <sub>`. Default: none for anyone.
   */
  toolsOf?: (subject: string) => readonly string[];
  /** The port to listen on (default: any free one), so `resource` can be this server's own URL. */
  port?: number;
}

/** One HTTP request as the protected server saw it. */
export interface ProtectedRequest {
  /** GET, POST or DELETE. */
  httpMethod: string;
  /** The JSON-RPC methods of a POST's messages (empty for answers and other verbs). */
  methods: string[];
  /** The verified subject of its bearer token; null when it had none or an invalid one. */
  subject: string | null;
}

/** The prompt every protected server offers beside its tools (argument `name`, completable): it answers `<sub> greets <name>`. */
export const PROTECTED_PROMPT = 'greeting';
/** The resource every protected server offers: it reads `you are <sub>`. */
export const PROTECTED_RESOURCE_URI = 'protected://whoami';
/** Completions of the prompt's `name` argument: those starting with the typed value. */
const GREETED = ['alice', 'albert', 'bob'];

export interface ProtectedMcpServer {
  /** The Streamable HTTP endpoint. */
  url: string;
  /** `sub` of every verified token that called a tool, in order: the server's own log of who called. */
  identities: string[];
  /** Requests refused with 401 (no token, a bad signature, wrong audience or issuer). */
  refused: number;
  /** Every HTTP request that reached it, in order: its JSON-RPC methods and the verified token's `sub` (null: no valid token) — to assert nothing came tokenless or with another's token. */
  requests: ProtectedRequest[];
  close(): Promise<void>;
}

/**
 * An MCP server (the official SDK, via startMcpServer) protected per the MCP authorization
 * spec: every request (but `publicMethods`) needs `Authorization: Bearer <access token>` issued
 * by `issuer` for `resource` (verified with jose against its JWKS); otherwise 401 with a
 * WWW-Authenticate naming its protected-resource metadata (RFC 9728, published at
 * `/.well-known/oauth-protected-resource`). Its tool `whoami` answers the caller's `sub`, and so
 * do its prompt `greeting` (argument `name`, completable) and its resource `protected://whoami`; a
 * subject's requests go to a server of its own tool set (`toolsOf`), so a session is never another subject's.
 */
export async function startProtectedMcpServer(options: ProtectedMcpServerOptions): Promise<ProtectedMcpServer> {
  const jwks = createRemoteJWKSet(new URL(options.jwksUri));
  const publicMethods = new Set(options.publicMethods ?? []);
  const identities: string[] = [];
  const requests: ProtectedRequest[] = [];
  const state = { refused: 0 };
  const subjectOf = (authorization: string | undefined) => /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
  const whoami = {
    name: 'whoami',
    description: "Answers the caller's identity at this server",
    handler: (_args: unknown, call: { headers: Record<string, unknown> }) =>
      `you are ${String(call.headers['x-verified-subject'])}`,
  };
  const startFor = (subject: string | null) =>
    startMcpServer({
      name: 'protected',
      tools: [
        whoami,
        ...(subject === null ? [] : (options.toolsOf?.(subject) ?? [])).map((name) => ({
          name,
          description: `${name} (test tool)`,
          handler: () => `${name} for ${subject}`,
        })),
      ],
      setup: (server) => registerCallerPromptAndResource(server, verifiedSubjectOf),
    });
  // The tokenless (public) server, and one per subject when tool sets differ, started on first use.
  const inners = new Map<string | null, Promise<McpFixture>>();
  const innerFor = (subject: string | null): Promise<McpFixture> => {
    const key = options.toolsOf ? subject : null;
    let inner = inners.get(key);
    if (!inner) inners.set(key, (inner = startFor(key)));
    return inner;
  };

  const server = createServer((req, res) => {
    void (async () => {
      const base = `http://${req.headers.host ?? '127.0.0.1'}`;
      const metadataUrl = `${base}/.well-known/oauth-protected-resource`;
      if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            resource: options.resource,
            authorization_servers: [options.issuer],
            bearer_methods_supported: ['header'],
          }),
        );
        return;
      }
      const body = await readBody(req);
      const messages = (() => {
        try {
          const parsed: unknown = JSON.parse(body || 'null');
          return (Array.isArray(parsed) ? parsed : [parsed]) as { method?: unknown }[];
        } catch {
          return [];
        }
      })();
      const needsToken =
        req.method !== 'POST' || messages.some((m) => typeof m?.method !== 'string' || !publicMethods.has(m.method));
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
      delete headers['x-verified-subject'];
      const token = subjectOf(req.headers.authorization);
      const logged: ProtectedRequest = {
        httpMethod: req.method ?? 'GET',
        methods: messages.flatMap((m) => (typeof m?.method === 'string' ? [m.method] : [])),
        subject: null,
      };
      if (token) {
        try {
          const { payload } = await jwtVerify(token, jwks, { issuer: options.issuer, audience: options.resource });
          headers['x-verified-subject'] = String(payload.sub);
          logged.subject = String(payload.sub);
          if (messages.some((m) => m?.method === 'tools/call')) identities.push(String(payload.sub));
        } catch {
          // An invalid token is refused below when the request needs one.
        }
      }
      // Logged once its subject is known: a reader never sees a verified request as tokenless.
      requests.push(logged);
      if (needsToken && !headers['x-verified-subject']) {
        state.refused += 1;
        res
          .writeHead(401, {
            'www-authenticate': `Bearer resource_metadata="${metadataUrl}"`,
            'content-type': 'application/json',
          })
          .end(JSON.stringify({ error: 'invalid_token' }));
        return;
      }
      const inner = await innerFor(headers['x-verified-subject'] ?? null);
      const answer = await fetch(inner.url, {
        method: req.method,
        headers,
        body: req.method === 'POST' ? body : undefined,
      });
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (name !== 'content-length' && name !== 'transfer-encoding') out[name] = value;
      });
      res.writeHead(answer.status, out);
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    identities,
    requests,
    get refused() {
      return state.refused;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...inners.values()].map(async (inner) => (await inner).close()));
    },
  };
}

/** The verified subject a request reached the inner server with (set by the protected front only). */
const verifiedSubjectOf = (headers: CallerHeaders): string => String(headers['x-verified-subject'] ?? 'nobody');

/** The HTTP headers of the request a prompt or resource handler answers (the SDK's `requestInfo`). */
export type CallerHeaders = Readonly<Record<string, unknown>>;

/**
 * Registers the prompt and the resource that answer as the caller (see PROTECTED_PROMPT,
 * PROTECTED_RESOURCE_URI), the caller named by `callerOf` from the request's headers: so any
 * fixture (startMcpServer's `setup`) serves them, answering with whatever identifies its caller.
 */
export function registerCallerPromptAndResource(server: McpServer, callerOf: (headers: CallerHeaders) => string): void {
  const caller = (extra: { requestInfo?: { headers: CallerHeaders } }): string =>
    callerOf(extra.requestInfo?.headers ?? {});
  server.registerPrompt(
    PROTECTED_PROMPT,
    {
      description: 'Greets someone as the caller',
      argsSchema: { name: completable(z.string(), (value) => GREETED.filter((name) => name.startsWith(value ?? ''))) },
    },
    ({ name }, extra) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `${caller(extra)} greets ${name}` } }],
    }),
  );
  server.registerResource(
    'whoami',
    PROTECTED_RESOURCE_URI,
    { description: "The caller's identity at this server", mimeType: 'text/plain' },
    (uri, extra) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: `you are ${caller(extra)}` }],
    }),
  );
}
