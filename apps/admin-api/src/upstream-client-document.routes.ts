import { UPSTREAM_CLIENT_DOCUMENT_PATH, upstreamClientDocument } from '@agentgw/credentials';
import { jsonResponse, openApiApp, type ServiceDeps } from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';

/** Authorization servers may cache the document this long (it changes only with the gateway's public URL). */
const CACHE_CONTROL = 'public, max-age=3600';

const ClientMetadataDocument = z
  .object({
    client_id: z.string().openapi({
      description:
        "This document's own URL: the gateway's client_id at authorization servers that accept such documents",
    }),
    client_name: z.string(),
    client_uri: z.string(),
    redirect_uris: z
      .array(z.string())
      .openapi({ description: "The vault's shared OAuth callback (the flow's state names the service type)" }),
    grant_types: z.array(z.string()),
    response_types: z.array(z.string()),
    token_endpoint_auth_method: z.literal('none'),
  })
  .openapi('UpstreamClientMetadataDocument');

// Under /oauth/ every error is the authorization server's shape (RFC 6749), this one's too.
const OAuthErrorBody = z.object({ error: z.string(), error_description: z.string() }).openapi('OAuthErrorBody');

const documentRoute = createRoute({
  tags: ['OAuth clients'],
  method: 'get',
  path: UPSTREAM_CLIENT_DOCUMENT_PATH,
  summary:
    "The gateway's client ID metadata document, its client_id at upstream MCP servers' authorization servers (public client, no secret)",
  responses: {
    200: jsonResponse(ClientMetadataDocument, 'The document (cacheable)'),
    404: jsonResponse(OAuthErrorBody, 'No document: GATEWAY_PUBLIC_URL is not an https (or loopback http) URL'),
  },
});

/**
 * The public document upstream authorization servers fetch when the gateway signs users in there
 * with its URL as client_id (MCP authorization 2025-11-25). 404 without GATEWAY_PUBLIC_URL (https,
 * or http on loopback): there is no URL such a server could fetch.
 */
export function upstreamClientDocumentRoutes(deps: ServiceDeps): OpenAPIHono {
  const app = openApiApp();
  app.openapi(documentRoute, (c) => {
    const document = upstreamClientDocument(deps.config);
    if (document === null) {
      c.header('cache-control', 'no-store');
      return c.json(
        {
          error: 'invalid_request',
          error_description:
            'The gateway has no client metadata document: GATEWAY_PUBLIC_URL is not an https (or loopback http) URL',
        },
        404,
      );
    }
    c.header('cache-control', CACHE_CONTROL);
    return c.json(ClientMetadataDocument.parse(document), 200);
  });
  return app;
}
