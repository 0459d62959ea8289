import type { Role, SessionUser } from './types.js';

/** A console page: where it lives, its menu label and which roles see it. */
export interface PageEntry {
  path: string;
  label: string;
  /** null: every signed-in user. */
  roles: Role[] | null;
}

const MANAGERS: Role[] = ['admin', 'tenant_admin'];

/**
 * The menu. It mirrors the gateway's role → permission table (packages/auth) so users are not
 * shown pages they can only get 403 from; the gateway still decides every call.
 */
export const PAGES: PageEntry[] = [
  { path: '/agents', label: 'Agents', roles: null },
  { path: '/tool-providers', label: 'Tool providers', roles: null },
  { path: '/tool-collisions', label: 'Tool collisions', roles: null },
  { path: '/access-rules', label: 'Access rules', roles: MANAGERS },
  { path: '/tool-pins', label: 'Tool pins', roles: MANAGERS },
  { path: '/confirmations', label: 'Confirmations', roles: null },
  { path: '/audit', label: 'Audit log', roles: null },
  { path: '/credentials', label: 'My credentials', roles: null },
  { path: '/credential-providers', label: 'Credential providers', roles: null },
  { path: '/api-keys', label: 'API keys', roles: MANAGERS },
  { path: '/devices', label: 'Devices', roles: null },
  { path: '/connected-clients', label: 'Connected clients', roles: null },
  { path: '/users', label: 'Users', roles: ['admin'] },
];

export const hasRole = (user: SessionUser, ...roles: Role[]): boolean => user.roles.some((r) => roles.includes(r));

/** The pages this user's roles open. */
export function pagesFor(user: SessionUser): PageEntry[] {
  return PAGES.filter((p) => p.roles === null || hasRole(user, ...p.roles));
}

/** Managing providers, rules and credential types: admins, and tenant admins within their tenant. */
export const canManageProviders = (user: SessionUser): boolean => hasRole(user, 'admin', 'tenant_admin');

/** Audit statistics are the admin's alone (spec: stats require the admin role). */
export const canSeeAuditStats = (user: SessionUser): boolean => hasRole(user, 'admin');

/** The audit query honours `user_id` for admins and tenant admins (within their tenant); others see their own entries. */
export const canFilterAuditByUser = (user: SessionUser): boolean => hasRole(user, 'admin', 'tenant_admin');

/** Identity events are an operator's view: admins read all, tenant admins their tenant's (the API refuses anyone else). */
export const canReadIdentityEvents = (user: SessionUser): boolean => hasRole(user, 'admin', 'tenant_admin');

/** Only an admin chooses the tenant of an audit query; tenant admins are pinned to their own. */
export const canFilterAuditByTenant = (user: SessionUser): boolean => hasRole(user, 'admin');

/**
 * A resource's scope in words: null is global; a user without a tenant creates into a private
 * scope (`private:<userId>`), visible to that user only.
 */
export function describeScope(tenantId: string | null | undefined): string {
  if (!tenantId) return 'global';
  if (tenantId.startsWith('private:')) return 'private (its creator only)';
  return `tenant ${tenantId}`;
}

/** Where a user lands after signing in, or after following a link to a page they may not open. */
export function landingPath(user: SessionUser, wanted: string): string {
  const pages = pagesFor(user);
  const base = wanted.split('?')[0] ?? '';
  // The consent step of an MCP client's sign-in (not a menu page): any signed-in user answers it.
  if (/^\/connect\/[A-Za-z0-9_-]+$/.test(base)) return wanted;
  const allowed = pages.some((p) => base === p.path || base.startsWith(`${p.path}/`));
  return allowed ? wanted : (pages[0]?.path ?? '/agents');
}
