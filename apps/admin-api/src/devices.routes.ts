import { flexibleAuth } from '@agentgw/auth';
import {
  IdParams,
  SuccessBody,
  errorResponses,
  flexibleSecurity,
  jsonBody,
  jsonResponse,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { deleteDevice, listDevices, registerDevice } from './devices.js';

const Platform = z.enum(['ios', 'macos', 'android']).openapi('DevicePlatform');

const DeviceSchema = z
  .object({
    id: z.string(),
    platform: Platform,
    deviceName: z.string().nullable(),
    pushTokenPrefix: z
      .string()
      .openapi({ description: 'First characters of the push token; the full token is never returned' }),
    isActive: z.boolean(),
    createdAt: z.string(),
  })
  .openapi('Device');

const RegisterDeviceBody = z
  .object({
    platform: Platform,
    pushToken: z.string().trim().min(1).max(4096),
    deviceName: z.string().trim().min(1).max(200).nullable().optional(),
  })
  .openapi('RegisterDeviceRequest');

const DeviceWritten = z.object({ success: z.literal(true), device: DeviceSchema });
const common = { tags: ['Notifications'], security: flexibleSecurity };

const registerRoute = createRoute({
  ...common,
  method: 'post',
  path: '/',
  summary: 'Register a device for push notifications, or reactivate it',
  request: { body: jsonBody(RegisterDeviceBody) },
  responses: {
    201: jsonResponse(DeviceWritten, 'Registered'),
    200: jsonResponse(DeviceWritten, 'Already registered by this user; reactivated and updated'),
    ...errorResponses(400, 401, 403, 409),
  },
});
const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/',
  summary: "List the caller's active devices",
  responses: {
    200: jsonResponse(z.object({ devices: z.array(DeviceSchema) }), 'Devices'),
    ...errorResponses(401, 403),
  },
});
const deleteRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/{id}',
  summary: "Remove one of the caller's devices",
  request: { params: IdParams },
  responses: { 200: jsonResponse(SuccessBody, 'Removed'), ...errorResponses(401, 403, 404) },
});

export function devicesRoutes(deps: ServiceDeps): OpenAPIHono {
  const app = openApiApp();
  app.use('*', flexibleAuth(deps.auth));
  app.openapi(registerRoute, async (c) => {
    const { device, created } = await registerDevice(deps, c.var.principal, c.req.valid('json'));
    return created ? c.json({ success: true as const, device }, 201) : c.json({ success: true as const, device }, 200);
  });
  app.openapi(listRoute, async (c) => c.json({ devices: await listDevices(deps.db, c.var.principal) }, 200));
  app.openapi(deleteRoute, async (c) => {
    await deleteDevice(deps.db, c.var.principal, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });
  return app;
}
