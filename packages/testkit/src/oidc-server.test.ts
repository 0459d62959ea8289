import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcServer, type OidcServer } from './oidc-server.js';

/** Holds this thread for `ms` without spinning: a process starved of CPU (or in a long GC pause) as on CI's busy cores. */
const stall = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

// A relying party (the gateway) fetches the provider's metadata, the person spends a while on the
// provider's pages, then the relying party POSTs the code to the token endpoint over the same
// kept-alive connection. If the provider drops idle connections sooner than the relying party's
// HTTP client stops reusing them, a relying party that stalls in between (CPU starvation, GC)
// writes its token request on a connection the provider has just closed: the POST fails
// (ECONNRESET, not retried) and the browser lands on a sign-in error instead of the next page.
describe('the test OpenID provider keeps idle connections open', () => {
  let idp: OidcServer;
  beforeAll(async () => {
    idp = await startOidcServer({
      clients: [{ clientId: 'rp', clientSecret: 'rp-secret', redirectUris: ['http://127.0.0.1:1/cb'] }],
    });
  });
  afterAll(() => idp.close());

  it("answers a token request sent on a connection that sat idle past Node's 5 s default while the client stalled", async () => {
    const discovery = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
    const { token_endpoint } = (await discovery.json()) as { token_endpoint: string };
    // The provider's side of the connection goes idle once it has finished the response (a turn of its event loop).
    await new Promise((resolve) => setTimeout(resolve, 200));
    stall(5_500);
    const token = await fetch(token_endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('rp:rp-secret').toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'unknown',
        redirect_uri: 'http://127.0.0.1:1/cb',
      }),
    });
    expect({ status: token.status, error: ((await token.json()) as { error: string }).error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
  });
});
