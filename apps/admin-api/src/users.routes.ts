import { ROLES, jwtAuth, requirePermission } from '@agentgw/auth';
import {
  IdParams,
  SuccessBody,
  errorResponses,
  jsonBody,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import {
  addRole,
  createUserAccount,
  deleteUser,
  getUser,
  listUsers,
  removeRole,
  updateUser,
  type User,
} from './users.js';
import { adminActionLog, changedFields } from './admin-action-log.js';

export const RoleSchema = z.enum(ROLES).openapi('Role');
export const TenantIdSchema = z.string().trim().min(1).max(200);

/** The user as login and register show it; admin routes add the timestamps. */
export const AccountUser = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    roles: z.array(RoleSchema),
    tenantId: z.string().nullable(),
  })
  .openapi('AccountUser');

const UserSchema = AccountUser.extend({ createdAt: z.string(), updatedAt: z.string() }).openapi('User');

const CreateUserBody = z
  .object({
    email: z.email().max(320),
    password: z.string().min(8).max(1024),
    name: z.string().trim().min(1).max(200).nullable().optional(),
    tenantId: TenantIdSchema.nullable().optional(),
    roles: z.array(RoleSchema).optional().openapi({ description: 'Defaults to [agent_creator]' }),
  })
  .openapi('CreateUserRequest');

const UpdateUserBody = CreateUserBody.partial().openapi('UpdateUserRequest');

const RoleBody = z.object({ role: RoleSchema }).openapi('AssignRoleRequest');
const RoleParams = IdParams.extend({ role: RoleSchema.openapi({ param: { name: 'role', in: 'path' } }) });

const UserBody = z.object({ user: UserSchema });
const UserWritten = z.object({ success: z.literal(true), user: UserSchema });

const common = { tags: ['Users'], security: jwtSecurity };

const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/',
  summary: 'List users',
  responses: { 200: jsonResponse(z.object({ users: z.array(UserSchema) }), 'Users'), ...errorResponses(401, 403) },
});
const createUserRoute = createRoute({
  ...common,
  method: 'post',
  path: '/',
  summary: 'Create a user',
  request: { body: jsonBody(CreateUserBody) },
  responses: { 201: jsonResponse(UserWritten, 'Created'), ...errorResponses(400, 401, 403, 409) },
});
const getRoute = createRoute({
  ...common,
  method: 'get',
  path: '/{id}',
  summary: 'Get a user',
  request: { params: IdParams },
  responses: { 200: jsonResponse(UserBody, 'User'), ...errorResponses(401, 403, 404) },
});
const updateRoute = createRoute({
  ...common,
  method: 'put',
  path: '/{id}',
  summary: 'Update a user',
  description:
    'Any of name, email, password, tenantId, roles. Role and tenant changes apply from the user’s next request.',
  request: { params: IdParams, body: jsonBody(UpdateUserBody) },
  responses: { 200: jsonResponse(UserWritten, 'Updated'), ...errorResponses(400, 401, 403, 404, 409) },
});
const deleteRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/{id}',
  summary: 'Delete a user',
  description: 'An admin cannot delete their own account (409).',
  request: { params: IdParams },
  responses: { 200: jsonResponse(SuccessBody, 'Deleted'), ...errorResponses(401, 403, 404, 409) },
});
const addRoleRoute = createRoute({
  ...common,
  method: 'post',
  path: '/{id}/roles',
  summary: 'Assign a role',
  request: { params: IdParams, body: jsonBody(RoleBody) },
  responses: { 200: jsonResponse(UserWritten, 'Role assigned'), ...errorResponses(400, 401, 403, 404) },
});
const removeRoleRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/{id}/roles/{role}',
  summary: 'Remove a role',
  description: 'An admin cannot remove their own admin role (409).',
  request: { params: RoleParams },
  responses: { 200: jsonResponse(UserWritten, 'Role removed'), ...errorResponses(400, 401, 403, 404, 409) },
});

/** Admin-only user management (`user:manage`); spans all tenants because only admin holds it. */
export function usersRoutes(deps: ServiceDeps): OpenAPIHono {
  const logAction = adminActionLog(deps);
  const userSubject = (user: User, details: Record<string, unknown> = {}) => ({
    providerId: null,
    tenantId: user.tenantId,
    details: { userId: user.id, email: user.email, ...details },
  });
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth), requirePermission('user:manage'));
  app.openapi(listRoute, async (c) => c.json({ users: await listUsers(deps.db) }, 200));
  app.openapi(createUserRoute, async (c) => {
    const user = await createUserAccount(deps, c.req.valid('json'));
    await logAction(c.var.principal, 'user_created', userSubject(user, { roles: user.roles }));
    return c.json({ success: true as const, user }, 201);
  });
  app.openapi(getRoute, async (c) => c.json({ user: await getUser(deps.db, c.req.valid('param').id) }, 200));
  app.openapi(updateRoute, async (c) => {
    const patch = c.req.valid('json');
    const user = await updateUser(deps, c.var.principal, c.req.valid('param').id, patch);
    await logAction(c.var.principal, 'user_updated', userSubject(user, { fields: changedFields(patch) }));
    return c.json({ success: true as const, user }, 200);
  });
  app.openapi(deleteRoute, async (c) => {
    const user = await getUser(deps.db, c.req.valid('param').id);
    await deleteUser(deps, c.var.principal, user.id);
    await logAction(c.var.principal, 'user_deleted', userSubject(user));
    return c.json({ success: true as const }, 200);
  });
  app.openapi(addRoleRoute, async (c) => {
    const { role } = c.req.valid('json');
    const user = await addRole(deps, c.req.valid('param').id, role);
    await logAction(c.var.principal, 'user_role_added', userSubject(user, { role }));
    return c.json({ success: true as const, user }, 200);
  });
  app.openapi(removeRoleRoute, async (c) => {
    const { id, role } = c.req.valid('param');
    const user = await removeRole(deps, c.var.principal, id, role);
    await logAction(c.var.principal, 'user_role_removed', userSubject(user, { role }));
    return c.json({ success: true as const, user }, 200);
  });
  return app;
}
