import type { ToolProvider } from '@agentgw/catalog';
import { assertStoredUrlAllowed, type EgressPolicy } from '@agentgw/core';
import type { ProviderTokenExchangeSettings } from '@agentgw/db';
import { HttpUrl } from '@agentgw/service-kit';
import { z } from '@hono/zod-openapi';

const optionalText = (max: number, description: string) =>
  z.string().trim().min(1).max(max).nullable().optional().openapi({ description });

/** The `tokenExchange` body of a `token_exchange` provider: where the caller's sign-in token is exchanged (RFC 8693) and for what. */
export const TokenExchangeInputSchema = z
  .object({
    tokenUrl: HttpUrl.optional().openapi({
      description: "The authorization server's token endpoint (or give `issuer`)",
    }),
    issuer: HttpUrl.optional().openapi({
      description: 'The authorization server, its token endpoint discovered from its metadata (or give `tokenUrl`)',
    }),
    clientId: z.string().min(1).max(500),
    clientSecret: z.string().min(1).max(8192).optional().openapi({
      description:
        'Write-only; sealed as the provider secret (responses carry `hasAuthSecret`); absent on update keeps it, absent on create: a public client',
    }),
    audience: optionalText(500, 'RFC 8693 `audience`: the logical name of the target service'),
    resource: optionalText(2048, 'RFC 8693 / RFC 8707 `resource`: the URI of the target service'),
    scope: optionalText(1000, 'Space-separated scopes requested for the upstream token'),
  })
  .refine((v) => (v.tokenUrl === undefined) !== (v.issuer === undefined), {
    message: 'give exactly one of tokenUrl and issuer',
    path: ['tokenUrl'],
  })
  .openapi('ToolProviderTokenExchangeInput');

/** The exchange settings as responses show them (the client secret never). */
export const TokenExchangeSchema = z
  .object({
    tokenUrl: z.string().nullable(),
    issuer: z.string().nullable(),
    clientId: z.string(),
    audience: z.string().nullable(),
    resource: z.string().nullable(),
    scope: z.string().nullable(),
  })
  .nullable()
  .openapi('ToolProviderTokenExchange', {
    description: "With token_exchange: where the caller's sign-in token is exchanged and for what",
  });

type TokenExchangeInput = z.infer<typeof TokenExchangeInputSchema>;

/** The catalog's settings and the secret to seal from the request body (tokenUrl/issuer egress-checked at write time → 400). */
export function tokenExchangeWrite(
  egress: EgressPolicy,
  input: TokenExchangeInput,
): { tokenExchange: ProviderTokenExchangeSettings; authSecret?: string } {
  const server: ProviderTokenExchangeSettings['server'] =
    input.tokenUrl !== undefined
      ? { kind: 'token_url', tokenUrl: input.tokenUrl }
      : { kind: 'issuer', issuer: input.issuer ?? '' };
  assertStoredUrlAllowed(
    egress,
    server.kind === 'token_url' ? server.tokenUrl : server.issuer,
    server.kind === 'token_url' ? 'tokenExchange.tokenUrl' : 'tokenExchange.issuer',
  );
  const tokenExchange = {
    server,
    clientId: input.clientId,
    audience: input.audience ?? null,
    resource: input.resource ?? null,
    scope: input.scope ?? null,
  };
  return input.clientSecret === undefined ? { tokenExchange } : { tokenExchange, authSecret: input.clientSecret };
}

/** The response shape of a provider's exchange settings. */
export function tokenExchangeView(provider: ToolProvider): z.infer<typeof TokenExchangeSchema> {
  const te = provider.tokenExchange;
  if (te === null) return null;
  return {
    tokenUrl: te.server.kind === 'token_url' ? te.server.tokenUrl : null,
    issuer: te.server.kind === 'issuer' ? te.server.issuer : null,
    clientId: te.clientId,
    audience: te.audience,
    resource: te.resource,
    scope: te.scope,
  };
}
