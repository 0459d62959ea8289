/**
 * Where the consent page may send the browser after an answer: only the gateway's own
 * authorization endpoint (`/oauth/authorize/<uid>` on this origin), never an address from
 * elsewhere, so a tampered answer cannot make the console an open redirect.
 */
export function isResumeUrl(redirectTo: string, origin: string): boolean {
  try {
    const url = new URL(redirectTo, origin);
    return url.origin === origin && url.pathname.startsWith('/oauth/authorize/');
  } catch {
    return false;
  }
}
