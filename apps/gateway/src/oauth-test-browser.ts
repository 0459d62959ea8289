import { expect } from 'vitest';

/** A kept cookie: its value and the path it is sent under (RFC 6265 section 5.1.4). */
type KeptCookie = { name: string; value: string; path: string };

/** Whether a cookie of `cookiePath` goes with a request for `path` (RFC 6265 section 5.1.4 path-match). */
const pathMatches = (cookiePath: string, path: string) =>
  path === cookiePath || (path.startsWith(cookiePath) && (cookiePath.endsWith('/') || path[cookiePath.length] === '/'));

/** The Path attribute of a Set-Cookie line, else the default path of the request (section 5.1.4). */
function pathOf(attributes: string[], requestPath: string): string {
  const given = attributes.map((a) => a.trim()).find((a) => a.toLowerCase().startsWith('path='));
  if (given?.slice(5).startsWith('/')) return given.slice(5);
  const cut = requestPath.lastIndexOf('/');
  return cut <= 0 ? '/' : requestPath.slice(0, cut);
}

/**
 * A browser for OAuth tests: follows nothing by itself (each redirect is the test's to check) and
 * keeps cookies per origin and path as a browser does, so a cookie scoped to one path is not sent
 * to another, and the gateway's authorization server and an identity provider on another loopback
 * port, both oidc-provider with the same cookie names, do not overwrite each other.
 */
export class TestBrowser {
  private readonly jars = new Map<string, Map<string, KeptCookie>>();

  /** `siteOf` names the jar of an origin: one name for several origins makes them one site (replicas behind one address). */
  constructor(private readonly siteOf: (origin: string) => string = (origin) => origin) {}

  /** One request with this origin's cookies for its path; the answer's Set-Cookie lines are kept by name and path (other attributes ignored). */
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const { origin, pathname } = new URL(url);
    const site = this.siteOf(origin);
    const jar = this.jars.get(site) ?? new Map<string, KeptCookie>();
    this.jars.set(site, jar);
    const cookie = [...jar.values()]
      .filter((c) => pathMatches(c.path, pathname))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, ...value] = pair!.split('=');
      const kept = { name: name!.trim(), value: value.join('='), path: pathOf(attributes, pathname) };
      jar.set(`${kept.name} ${kept.path}`, kept);
    }
    return res;
  }

  /** The cookie `name` this browser would send to `url` (an origin alone means its root path). */
  cookie(url: string, name: string): string | undefined {
    const { origin, pathname } = new URL(url);
    return [...(this.jars.get(this.siteOf(origin))?.values() ?? [])].find(
      (c) => c.name === name && pathMatches(c.path, pathname),
    )?.value;
  }

  /** Opens an MCP client's authorization URL, which sends the browser to the console's /connect/<uid>: the uid. */
  async openAuthorization(url: string): Promise<string> {
    const res = await this.go(url);
    expect(res.status).toBe(303);
    const consentPath = new URL(res.headers.get('location')!, url).pathname;
    expect(consentPath).toMatch(/^\/connect\/[A-Za-z0-9_-]+$/);
    return consentPath.split('/').pop()!;
  }

  /** Signs `person` in on the console's API at `origin`, with a cookie session as the console's pages do. */
  async signIn(origin: string, person: { email: string; password: string }): Promise<void> {
    const body = JSON.stringify({ email: person.email, password: person.password, session: 'cookie' });
    expect(
      (
        await this.go(`${origin}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin },
          body,
        })
      ).status,
    ).toBe(200);
  }

  /** Approves the pending sign-in `uid` on `origin`'s console API and follows the redirects to `redirect`: the parameters it gets. */
  async approve(origin: string, uid: string, redirect: string): Promise<URLSearchParams> {
    const answer = await this.go(`${origin}/api/v1/oauth/interactions/${uid}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(answer.status).toBe(200);
    let next = new URL(((await answer.json()) as { redirectTo: string }).redirectTo, origin).href;
    for (let hop = 0; !next.startsWith(redirect); hop++) {
      expect(hop, 'the authorization never reached the redirect URI').toBeLessThan(5);
      const res = await this.go(next);
      const location = res.headers.get('location');
      expect(location, `hop ${hop} answered ${res.status}`).not.toBeNull();
      next = new URL(location!, next).href;
    }
    return new URL(next).searchParams;
  }
}
