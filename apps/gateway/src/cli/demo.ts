import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PORT, readEnvironment, type EnvironmentInput } from '../environment.js';

/** The demo MCP server (packages/testkit), started in the background by `gateway demo`. */
const TESTKIT_DIR = fileURLToPath(new URL('../../../../packages/testkit/', import.meta.url));
const PROVIDER_NAME = 'demo';
const AGENT_NAME = 'demo-agent';
/** How long `/health` may take before the gateway counts as absent (a loaded machine took over 2 s). */
const HEALTH_WAIT_MS = 20_000;

export interface DemoArgs {
  url?: string;
  email?: string;
  password?: string;
}

/**
 * `gateway demo`: against a running gateway, starts the demo MCP server in the background,
 * registers it as the provider `demo`, gives the agent `demo-agent` access to it (a rerun points
 * the provider at the new server and rotates the agent's token) and prints ready client settings.
 */
export async function demoCommand(input: EnvironmentInput, args: DemoArgs): Promise<number> {
  const { env } = readEnvironment(input);
  const base = (args.url ?? `http://127.0.0.1:${env.PORT ?? DEFAULT_PORT}`).replace(/\/+$/, '');
  const email = args.email ?? env.ADMIN_EMAIL;
  const password = args.password ?? env.ADMIN_PASSWORD;
  if (!email || !password) {
    console.error('gateway demo needs an admin account: --email E --password P (or ADMIN_EMAIL and ADMIN_PASSWORD).');
    return 2;
  }
  const api = gatewayApi(`${base}/api/v1`);
  try {
    // A busy machine answers slowly: only a refused connection (or a long silence) means no gateway.
    await fetch(`${base}/health`, { signal: AbortSignal.timeout(HEALTH_WAIT_MS) });
  } catch (err) {
    const slow = err instanceof DOMException && err.name === 'TimeoutError';
    console.error(
      slow
        ? `The gateway at ${base} did not answer /health within ${HEALTH_WAIT_MS / 1000} s; try again once it is idle.`
        : `No gateway answers at ${base}; start one first (pnpm start), or name it with --url.`,
    );
    return 1;
  }
  const { token } = await api<{ token: string }>('POST', '/auth/login', { email, password });
  const upstream = await startDemoServer();
  const auth = api.as(token);

  const { providers } = await auth<{ providers: { id: string; name: string }[] }>('GET', '/admin/tool-providers');
  const existing = providers.find((p) => p.name === PROVIDER_NAME);
  const provider = existing
    ? (await auth<Written>('PUT', `/admin/tool-providers/${existing.id}`, { endpoint: upstream })).provider
    : (await auth<Written>('POST', '/admin/tool-providers', { name: PROVIDER_NAME, pattern: '*', endpoint: upstream }))
        .provider;
  const { tools } = await auth<{ tools: { name: string }[] }>('GET', `/admin/tool-providers/${provider.id}/tools`);

  const { agents } = await auth<{ agents: { id: string; name: string }[] }>('GET', '/admin/agents');
  const known = agents.find((a) => a.name === AGENT_NAME);
  let runtimeToken: string;
  if (known) {
    runtimeToken = (await auth<RuntimeToken>('POST', `/admin/agents/${known.id}/regenerate-token`)).runtime_token;
  } else {
    const created = await auth<RuntimeToken & { agent: { id: string } }>('POST', '/admin/agents', {
      name: AGENT_NAME,
      upstreamUrl: 'http://127.0.0.1:9/run',
    });
    runtimeToken = created.runtime_token;
    await auth('POST', '/admin/provider-access', {
      subjectType: 'agent',
      subjectId: created.agent.id,
      providerId: provider.id,
      action: 'allow',
    });
  }
  const endpoint = `${base}/api/v1/mcp/mcp`;
  // Listing through the MCP endpoint checks the whole path and fixes the names this agent sees.
  const echo = (await listAsAgent(endpoint, runtimeToken)).find((name) => name.endsWith('echo'));
  if (!echo) throw new Error(`the agent's tools/list has no echo tool`);
  console.log(clientSettings({ endpoint, upstream, runtimeToken, tools, echo }));
  return 0;
}

/** The 2026-07-28 request metadata every sessionless call carries. */
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The tool names `tools/list` shows the agent on the unified endpoint. */
async function listAsAgent(endpoint: string, runtimeToken: string): Promise<string[]> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${runtimeToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } }),
  });
  const body = (await res.json().catch(() => ({}))) as { result?: { tools?: { name: string }[] }; error?: unknown };
  if (!res.ok || !body.result?.tools) {
    throw new Error(`tools/list through ${endpoint} answered ${res.status}: ${JSON.stringify(body.error ?? body)}`);
  }
  return body.result.tools.map((t) => t.name);
}

type Written = { provider: { id: string } };
type RuntimeToken = { runtime_token: string };

/** A JSON call to the gateway's API; a refusal becomes an Error with the gateway's own message. */
function gatewayApi(root: string) {
  const call =
    (token?: string) =>
    async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${root}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const parsed = (await res.json().catch(() => ({}))) as { message?: string };
      if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${parsed.message ?? 'no message'}`);
      return parsed as T;
    };
  return Object.assign(call(), { as: (token: string) => call(token) });
}

/** Starts testkit's demo MCP server detached (it outlives this command) and returns its URL. */
function startDemoServer(): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/demo-mcp-server.ts', '--background'], {
    cwd: TESTKIT_DIR,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) =>
      code === 0 && out.trim() ? resolve(out.trim()) : reject(new Error(`the demo MCP server did not start (${code})`)),
    );
  });
}

/** What a person pastes into mcp-remote, the MCP Inspector or curl to call the demo's tools through the gateway. */
function clientSettings(demo: {
  endpoint: string;
  upstream: string;
  runtimeToken: string;
  tools: { name: string }[];
  echo: string;
}) {
  const { endpoint, runtimeToken } = demo;
  const call = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: demo.echo, arguments: { text: 'hello' }, _meta: META },
  });
  const mcpRemote = {
    mcpServers: {
      'agent-gateway-demo': {
        command: 'npx',
        args: ['-y', 'mcp-remote', endpoint, '--header', `Authorization:Bearer ${runtimeToken}`],
      },
    },
  };
  return [
    `Provider "${PROVIDER_NAME}" -> ${demo.upstream} (tools: ${demo.tools.map((t) => t.name).join(', ')})`,
    `Agent "${AGENT_NAME}" may call them. Its runtime token (shown once; a rerun rotates it):`,
    `  ${runtimeToken}`,
    '',
    `MCP endpoint: ${endpoint}`,
    '',
    'curl (protocol 2026-07-28, no session needed):',
    `  curl -s -X POST ${endpoint} -H 'authorization: Bearer ${runtimeToken}' -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -H 'mcp-protocol-version: 2026-07-28' -d '${call}'`,
    '',
    'MCP Inspector (CLI):',
    `  npx @modelcontextprotocol/inspector --cli ${endpoint} --transport http --header 'Authorization: Bearer ${runtimeToken}' --method tools/list`,
    '',
    "mcp-remote (a client configuration such as Claude Desktop's; without --header it signs in by OAuth in a browser):",
    JSON.stringify(mcpRemote, null, 2).replace(/^/gm, '  '),
  ].join('\n');
}
