import { createServer, type Http2Server, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, jwtVerify, type CryptoKey } from 'jose';

/** One request the fake APNs got, with its provider token as verified (or why it was not). */
export interface Received {
  headers: IncomingHttpHeaders;
  body: unknown;
  jwt: { header: ReturnType<typeof decodeProtectedHeader>; iss: unknown; iat: unknown } | { error: string };
}

/**
 * A loopback APNs: an `http2` server (it speaks nothing but HTTP/2), and it checks what Apple checks before delivering — a provider
 * token that verifies with the team's public key (ES256, key id, issuer), the topic, the push
 * type, a JSON payload with `aps` — then answers by device token.
 */
export async function startFakeApns(publicKey: CryptoKey, expect: { teamId: string; keyId: string; topic: string }) {
  const received: Received[] = [];
  const server: Http2Server = createServer();
  server.on('stream', (stream, headers) => {
    let raw = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (raw += c));
    const respond = async () => {
      const answer = (status: number, reason?: string) => {
        stream.respond({ ':status': status, 'content-type': 'application/json' });
        stream.end(reason ? JSON.stringify({ reason }) : undefined);
      };
      const token = /^bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1];
      let jwt: Received['jwt'];
      try {
        const { payload } = await jwtVerify(token ?? '', publicKey, { algorithms: ['ES256'], issuer: expect.teamId });
        jwt = { header: decodeProtectedHeader(token!), iss: payload.iss, iat: payload.iat };
      } catch (err) {
        jwt = { error: (err as Error).message };
      }
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        // recorded as null
      }
      received.push({ headers, body, jwt });
      if ('error' in jwt || jwt.header.kid !== expect.keyId) return answer(403, 'InvalidProviderToken');
      if (headers['apns-topic'] !== expect.topic) return answer(400, 'BadTopic');
      if (headers['apns-push-type'] !== 'alert' || headers[':method'] !== 'POST') return answer(400, 'BadMessageId');
      if (typeof (body as { aps?: unknown } | null)?.aps !== 'object') return answer(400, 'PayloadEmpty');
      const device = /^\/3\/device\/(.+)$/.exec(String(headers[':path']))?.[1];
      if (device === 'gone') return answer(410, 'Unregistered');
      if (device === 'not-hex') return answer(400, 'BadDeviceToken');
      if (device === 'busy') return answer(503, 'ServiceUnavailable');
      return answer(200);
    };
    // A stream the client reset cannot be answered: close it rather than leave a rejection behind.
    stream.on('end', () => void respond().catch(() => stream.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
