import { SignJWT, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { isOAuthAccessToken, OAUTH_ACCESS_TOKEN_TYP } from './oauth-access-tokens.js';

describe('isOAuthAccessToken', () => {
  it('recognises a JWT whose header says at+jwt, whatever the case', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const sign = (typ: string) => new SignJWT({ sub: 'u' }).setProtectedHeader({ alg: 'ES256', typ }).sign(privateKey);
    expect(isOAuthAccessToken(await sign(OAUTH_ACCESS_TOKEN_TYP))).toBe(true);
    expect(isOAuthAccessToken(await sign('AT+JWT'))).toBe(true);
    expect(isOAuthAccessToken(await sign('JWT'))).toBe(false);
  });

  it("refuses the gateway's own token forms and garbage without throwing", () => {
    for (const token of ['art_abc.def.ghi', 'gk_0123456789', 'eyJ', 'eyJub3Q.json.x', '', '...'])
      expect(isOAuthAccessToken(token)).toBe(false);
  });
});
