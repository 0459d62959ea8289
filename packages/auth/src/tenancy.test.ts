import { describe, expect, it } from 'vitest';
import type { RoleName } from '@agentgw/db';
import { permissionsOf } from './permissions.js';
import type { Principal } from './principal.js';
import { isVisibleTo, isWritableBy, tenantScope, visibleTenantFilter, writeTenant } from './tenancy.js';

const principal = (roles: RoleName[], tenantId: string | null, userId = 'u'): Principal => ({
  via: 'jwt',
  userId,
  email: null,
  roles,
  tenantId,
  agentId: null,
  endUserId: userId,
  apiKey: null,
  permissions: permissionsOf(roles),
});

/** A runtime token alone: no user, so no private scope either. */
const bareAgent = (tenantId: string | null): Principal => ({
  via: 'runtime_token',
  userId: null,
  email: null,
  roles: [],
  tenantId,
  agentId: 'agent-1',
  endUserId: null,
  apiKey: null,
  permissions: permissionsOf([]),
});

describe('tenancy', () => {
  const admin = principal(['admin'], null);
  const tenantAdmin = principal(['tenant_admin'], 'A');
  const creator = principal(['agent_creator'], 'A');
  const globalCreator = principal(['agent_creator'], null);

  it('admin sees everything; others see their tenant and global', () => {
    expect(isVisibleTo(admin, 'B')).toBe(true);
    expect(isVisibleTo(tenantAdmin, 'A')).toBe(true);
    expect(isVisibleTo(tenantAdmin, null)).toBe(true);
    expect(isVisibleTo(tenantAdmin, 'B')).toBe(false);
    expect(isVisibleTo(globalCreator, null)).toBe(true);
    expect(isVisibleTo(globalCreator, 'A')).toBe(false);
  });

  it('admin chooses the tenant to write; others are pinned to their own', () => {
    expect(writeTenant(admin, 'B')).toBe('B');
    expect(writeTenant(admin, undefined)).toBeNull();
    expect(writeTenant(creator, undefined)).toBe('A');
    expect(writeTenant(creator, null)).toBe('A');
    expect(writeTenant(creator, 'A')).toBe('A');
    expect(() => writeTenant(creator, 'B')).toThrow(expect.objectContaining({ status: 403, code: 'TENANT_FORBIDDEN' }));
    expect(() => writeTenant(globalCreator, 'A')).toThrow(expect.objectContaining({ status: 403 }));
  });

  it('a non-admin without a tenant creates into a private scope, never global', () => {
    const tenantlessAdmin = principal(['tenant_admin'], null, 'ta');
    expect(tenantScope(globalCreator)).toBe('private:u');
    expect(writeTenant(globalCreator, undefined)).toBe('private:u');
    expect(writeTenant(globalCreator, null)).toBe('private:u');
    expect(writeTenant(tenantlessAdmin, undefined)).toBe('private:ta');
    expect(() => writeTenant(tenantlessAdmin, 'private:u')).toThrow(expect.objectContaining({ status: 403 }));
    // A caller with neither user nor tenant (a bare runtime token of a global agent) creates nothing.
    expect(() => writeTenant(bareAgent(null), undefined)).toThrow(
      expect.objectContaining({ code: 'TENANT_FORBIDDEN' }),
    );
    expect(tenantScope(admin)).toBeNull();
  });

  it('private resources are seen by their owner and admins only; global ones are changed by admins only', () => {
    const otherTenantless = principal(['agent_creator'], null, 'v');
    expect(isVisibleTo(globalCreator, 'private:u')).toBe(true);
    expect(isVisibleTo(otherTenantless, 'private:u')).toBe(false);
    expect(isVisibleTo(creator, 'private:u')).toBe(false);
    expect(isVisibleTo(tenantAdmin, 'private:u')).toBe(false);
    expect(isVisibleTo(admin, 'private:u')).toBe(true);
    expect(isWritableBy(globalCreator, 'private:u')).toBe(true);
    expect(isWritableBy(globalCreator, null)).toBe(false);
    expect(isWritableBy(principal(['tenant_admin'], null, 'ta'), null)).toBe(false);
    expect(isWritableBy(tenantAdmin, 'A')).toBe(true);
    expect(isWritableBy(tenantAdmin, null)).toBe(false);
    expect(isWritableBy(admin, null)).toBe(true);
  });

  it('describes the readable tenants', () => {
    expect(visibleTenantFilter(admin)).toEqual({ all: true });
    expect(visibleTenantFilter(creator)).toEqual({ all: false, tenants: ['A'], includeGlobal: true });
    expect(visibleTenantFilter(globalCreator)).toEqual({ all: false, tenants: ['private:u'], includeGlobal: true });
    expect(visibleTenantFilter(bareAgent(null))).toEqual({ all: false, tenants: [], includeGlobal: true });
  });
});
