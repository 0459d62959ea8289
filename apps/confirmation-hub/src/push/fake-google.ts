import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify, type CryptoKey } from 'jose';

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => resolve(raw));
  });

const reply = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const fcmError = (code: number, status: string, errorCode: string, extra: object[] = []) => ({
  error: {
    code,
    status,
    message: 'error',
    details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode }, ...extra],
  },
});

/**
 * A loopback Google: the OAuth token endpoint verifies the RS256 assertion as Google does
 * (signature with the service account's public key, iss, aud = token URI, scope, grant type)
 * and issues access tokens; the FCM endpoint wants one of them as bearer and a v1 message.
 */
export async function startFakeGoogle(publicKey: CryptoKey, account: { email: string; project: string }) {
  const issued = new Set<string>();
  const exchanges: { kid: unknown }[] = [];
  const messages: { authorization: string | undefined; body: { message?: Record<string, unknown> } }[] = [];
  let url = '';
  let revokeAll = false;
  const respond = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await read(req);
    if (req.method === 'POST' && req.url === '/token') {
      const form = new URLSearchParams(raw);
      if (
        req.headers['content-type'] !== 'application/x-www-form-urlencoded' ||
        form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer'
      ) {
        return reply(res, 400, { error: 'unsupported_grant_type' });
      }
      try {
        const { payload, protectedHeader } = await jwtVerify(form.get('assertion') ?? '', publicKey, {
          algorithms: ['RS256'],
          issuer: account.email,
          audience: `${url}/token`,
        });
        if (payload.scope !== 'https://www.googleapis.com/auth/firebase.messaging')
          return reply(res, 400, { error: 'invalid_scope' });
        exchanges.push({ kid: protectedHeader.kid });
      } catch {
        return reply(res, 400, { error: 'invalid_grant' });
      }
      const token = `ya29.fake-${issued.size + 1}`;
      issued.add(token);
      return reply(res, 200, { access_token: token, expires_in: 3600, token_type: 'Bearer' });
    }
    if (req.method === 'POST' && req.url === `/v1/projects/${account.project}/messages:send`) {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const body = JSON.parse(raw) as { message?: Record<string, unknown> };
      messages.push({ authorization: req.headers.authorization, body });
      if (!bearer || !issued.has(bearer) || revokeAll)
        return reply(res, 401, { error: { code: 401, status: 'UNAUTHENTICATED' } });
      const message = body.message ?? {};
      const data = message.data as Record<string, unknown> | undefined;
      if (data && Object.values(data).some((v) => typeof v !== 'string'))
        return reply(res, 400, fcmError(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT'));
      if (message.token === 'gone') return reply(res, 404, fcmError(404, 'NOT_FOUND', 'UNREGISTERED'));
      if (message.token === 'malformed') {
        return reply(
          res,
          400,
          fcmError(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', [
            { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.token' }] },
          ]),
        );
      }
      if (message.token === 'busy') return reply(res, 503, fcmError(503, 'UNAVAILABLE', 'UNAVAILABLE'));
      return reply(res, 200, { name: `projects/${account.project}/messages/1` });
    }
    reply(res, 404, { error: { code: 404, status: 'NOT_FOUND' } });
  };
  // A body that is not JSON drops the connection (the client sees it fail) instead of an unhandled rejection.
  const server: Server = createServer((req, res) => void respond(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    exchanges,
    messages,
    revoke: (on: boolean) => (revokeAll = on),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
