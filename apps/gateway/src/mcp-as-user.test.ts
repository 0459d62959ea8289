import { describe, expect, it } from 'vitest';
import { asUserGateway, connectUrl, RESOURCE, type Json } from './as-user.fixtures.js';

// Tool calls that reach an MCP upstream as the user (issue 22.4), in the all-in-one: the
// upstream (official SDK) accepts only access tokens of the OpenID provider for its resource and
// logs who called; two users who connected reach it as two identities, a third gets the connect URL.
describe('an MCP upstream called as the user (all-in-one)', () => {
  const gateway = asUserGateway({ credentialProvider: { serviceType: 'acme_tools', name: 'Acme tools' } });

  /** A user allowed to call the provider's tools; `account` connects at the provider when given. */
  async function user(account: string | null): Promise<string> {
    const token = await gateway.user();
    if (account) await gateway.connect(token, account);
    return token;
  }

  it('reaches the upstream as each user who connected, and gives the others the connect URL, audited as refused', async () => {
    const alice = await user('alice');
    const bob = await user('bob');
    const carol = await user(null);

    const a = await gateway.whoami(alice);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.result.content[0].text).toBe('you are alice');
    const b = await gateway.whoami(bob);
    expect(b.body.result.content[0].text).toBe('you are bob');
    expect(gateway.upstream.identities).toEqual(['alice', 'bob']);

    const c = await gateway.whoami(carol);
    expect(c.status).toBe(403);
    expect(c.body.error).toMatchObject({
      code: -32003,
      data: { code: 'CREDENTIALS_REQUIRED', missing: ['acme_tools'], authUrl: connectUrl('acme_tools') },
    });
    expect(gateway.upstream.identities).toEqual(['alice', 'bob']);
    const auditId = c.body.error.data.auditId as string;
    const record = await gateway.waitForAudit(auditId);
    expect(record).toMatchObject({ status: 'rejected', error: expect.stringContaining('Connect acme_tools first') });
  });

  it('asks a client that declared URL-mode elicitation to open the connect URL (URLElicitationRequiredError)', async () => {
    const dave = await user(null);
    const session = await gateway.openSession(dave, { elicitation: { url: {} } });
    const res = await gateway.legacy(
      dave,
      'POST',
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      session,
    );
    const body = (await res.json()) as Json;
    expect(body.error).toMatchObject({
      code: -32042,
      data: {
        elicitations: [{ mode: 'url', url: connectUrl('acme_tools'), elicitationId: expect.any(String) }],
        code: 'CREDENTIALS_REQUIRED',
      },
    });
  });

  it('refuses an upstream request carrying no token or one not issued for it (the fixture is really protected)', async () => {
    const bare = await fetch(gateway.upstream.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
    });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toContain('resource_metadata=');
    const metadata = (await (
      await fetch(new URL('/.well-known/oauth-protected-resource', gateway.upstream.url))
    ).json()) as Json;
    expect(metadata).toEqual({
      resource: RESOURCE,
      authorization_servers: [gateway.oidc.issuer],
      bearer_methods_supported: ['header'],
    });
  });
});
