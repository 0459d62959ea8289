import type { Seeded } from './bench-cases.js';

/** The credential's service type the second agent requires. */
const SERVICE_TYPE = 'bench_key';

/** Through the admin API: an MCP provider (the raw upstream), two agents (one requiring a credential), an allow rule, the admin's credential. */
export async function seed(
  base: string,
  admin: { email: string; password: string },
  urls: { agent: string; mcp: string },
): Promise<Seeded> {
  const login = (await (
    await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(admin),
    })
  ).json()) as { token: string };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${login.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const provider = (await post('/admin/tool-providers', { name: 'raw', pattern: '*', endpoint: urls.mcp }))
    .provider as {
    id: string;
  };
  const agent = await post('/admin/agents', { name: 'bench', upstreamUrl: urls.agent });
  const withCredential = await post('/admin/agents', {
    name: 'bench-credential',
    upstreamUrl: urls.agent,
    requiredCredentials: [{ serviceType: SERVICE_TYPE }],
  });
  const agentId = (agent.agent as { id: string }).id;
  await post('/admin/provider-access', { subjectType: 'agent', subjectId: agentId, providerId: '*', action: 'allow' });
  await post('/credentials/apikey', { serviceType: SERVICE_TYPE, apiKey: 'bench-api-key-value' });
  return {
    userToken: login.token,
    runtimeToken: agent.runtime_token as string,
    agentId,
    agentWithCredentialId: (withCredential.agent as { id: string }).id,
    providerId: provider.id,
  };
}
