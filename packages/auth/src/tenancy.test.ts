import { describe, expect, it } from 'vitest';
import type { RoleName } from '@agentgw/db';
import { permissionsOf } from './permissions.js';
import type { Principal } from './principal.js';
import { isVisibleTo, visibleTenantFilter, writeTenant } from './tenancy.js';

const principal = (roles: RoleName[], tenantId: string | null): Principal => ({
  via: 'jwt',
  userId: 'u',
  email: null,
  roles,
  tenantId,
  agentId: null,
  endUserId: 'u',
  apiKey: null,
  permissions: permissionsOf(roles),
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

  it('describes the readable tenants', () => {
    expect(visibleTenantFilter(admin)).toEqual({ all: true });
    expect(visibleTenantFilter(creator)).toEqual({ all: false, tenants: ['A'], includeGlobal: true });
    expect(visibleTenantFilter(globalCreator)).toEqual({ all: false, tenants: [], includeGlobal: true });
  });
});
