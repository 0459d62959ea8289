/**
 * A browser for OAuth tests: follows nothing by itself (each redirect is the test's to check) and
 * keeps cookies per origin, so the gateway's authorization server and an identity provider on
 * another loopback port, both oidc-provider with the same cookie names, do not overwrite each other.
 */
export class TestBrowser {
  private readonly jars = new Map<string, Map<string, string>>();

  /** One request with this origin's cookies; the answer's Set-Cookie lines are kept (attributes ignored). */
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      jar.set(name!.trim(), value.join('='));
    }
    return res;
  }

  /** The cookie `name` this browser holds for `origin`. */
  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(origin)?.get(name);
  }
}
