import { validationErrorFrom } from '@agentgw/core';
import { OpenAPIHono, z, type RouteConfig } from '@hono/zod-openapi';

type RequestBody = NonNullable<NonNullable<RouteConfig['request']>['body']>;

type OpenApiAppOptions = NonNullable<ConstructorParameters<typeof OpenAPIHono>[0]>;

/**
 * Every service's route group is an OpenAPIHono built here, so the OpenAPI document is
 * generated from the same zod schemas that validate requests, and a failed validation throws
 * the one 400 error body (naming the field) instead of zod-openapi's default response.
 */
export function openApiApp(options: Pick<OpenApiAppOptions, 'router'> = {}): OpenAPIHono {
  return new OpenAPIHono({
    ...options,
    defaultHook: (result) => {
      if (!result.success) throw validationErrorFrom(result.error);
    },
  });
}

/** The one error body (`{ code, message, ...details }`), documented once for every route. */
export const ErrorBody = z.object({ code: z.string(), message: z.string() }).catchall(z.unknown()).openapi('Error');

const errorDescriptions = {
  400: 'Invalid input; `field` names the offending field',
  401: 'Missing or invalid credentials',
  403: 'Not permitted',
  404: 'Unknown id, or a resource of another tenant',
  409: 'Conflict with an existing resource',
  413: 'The request body is larger than the route accepts',
  429: 'Rate limited; see Retry-After',
  501: 'Not implemented yet',
  502: 'The upstream failed or could not be reached',
  503: 'A dependency (database or Redis) is unavailable',
  504: 'The upstream did not answer in time',
} as const;
type ErrorStatus = keyof typeof errorDescriptions;

type ErrorResponse = { description: string; content: { 'application/json': { schema: typeof ErrorBody } } };

/** OpenAPI `responses` entries for the error statuses a route can answer. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]): Record<S, ErrorResponse> {
  const responses = {} as Record<S, ErrorResponse>;
  for (const s of statuses)
    responses[s] = { description: errorDescriptions[s], content: { 'application/json': { schema: ErrorBody } } };
  return responses;
}

/**
 * An http(s) URL. Not `z.httpUrl()`: that one demands a domain name and refuses `localhost` and
 * IP addresses, which internal upstreams (and test fixtures) use.
 */
export const HttpUrl = z
  .url({ protocol: /^https?$/, error: (issue) => (issue.input === undefined ? undefined : 'must be an http(s) URL') })
  .max(2048);

/** `/:id` path parameter. */
export const IdParams = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

/** `{ success: true }`, the body of deletes. */
export const SuccessBody = z.object({ success: z.literal(true) }).openapi('Success');

/** Security requirements, matching the schemes registered in the OpenAPI document. */
type SecurityRequirement = Record<string, string[]>;
export const jwtSecurity: SecurityRequirement[] = [{ bearerAuth: [] }];
export const flexibleSecurity: SecurityRequirement[] = [{ bearerAuth: [] }, { apiKey: [], userId: [] }];
export const serviceSecurity: SecurityRequirement[] = [{ serviceToken: [] }];

/** JSON request body that must be present (so a missing or non-JSON body is a 400, not `{}`). */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { 'application/json': { schema } } } as const;
}

/** JSON response entry. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } } as const;
}

/**
 * Documents a JSON request body whose handler parses it itself (`parseJson`), for routes that
 * must keep their own order of checks or forward the body as sent: the OpenAPI schema comes
 * from the same zod schema, but zod-openapi adds no validator or media-type gate for it.
 */
export function documentedJsonBody<T extends z.ZodType>(schema: T): RequestBody {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return {
    required: true,
    content: {
      'application/json': {
        schema: jsonSchema as Extract<RequestBody['content'][string], { schema?: unknown }>['schema'],
      },
    },
  };
}
