import { describe, expect, it } from 'vitest';
import { canSeeAuditStats, describeScope, landingPath, pagesFor } from './navigation.js';
import type { Role, SessionUser } from './types.js';

const user = (...roles: Role[]): SessionUser => ({
  id: 'u1',
  email: 'u@example.com',
  name: null,
  roles,
  tenantId: null,
});

describe('pagesFor', () => {
  it('shows managers the rule and API key pages, agent creators not', () => {
    const admin = pagesFor(user('admin')).map((p) => p.path);
    const creator = pagesFor(user('agent_creator')).map((p) => p.path);
    expect(admin).toContain('/access-rules');
    expect(admin).toContain('/api-keys');
    expect(pagesFor(user('tenant_admin')).map((p) => p.path)).toContain('/access-rules');
    expect(creator).not.toContain('/access-rules');
    expect(creator).not.toContain('/api-keys');
    expect(creator).not.toContain('/users');
    expect(pagesFor(user('tenant_admin')).map((p) => p.path)).not.toContain('/users');
    expect(admin).toContain('/users');
    expect(creator).toEqual(
      expect.arrayContaining(['/agents', '/credentials', '/confirmations', '/audit', '/devices']),
    );
  });

  it('keeps audit statistics to admins', () => {
    expect(canSeeAuditStats(user('admin'))).toBe(true);
    expect(canSeeAuditStats(user('tenant_admin'))).toBe(false);
  });
});

describe('describeScope', () => {
  it('words global, private and tenant scopes', () => {
    expect(describeScope(null)).toBe('global');
    expect(describeScope('private:u1')).toBe('private (its creator only)');
    expect(describeScope('acme')).toBe('tenant acme');
  });
});

describe('landingPath', () => {
  it('keeps a permitted deep link with its query and sends others to the first page', () => {
    expect(landingPath(user('agent_creator'), '/credentials?serviceType=github')).toBe(
      '/credentials?serviceType=github',
    );
    expect(landingPath(user('agent_creator'), '/agents/abc')).toBe('/agents/abc');
    expect(landingPath(user('agent_creator'), '/api-keys')).toBe('/agents');
    expect(landingPath(user('admin'), '/')).toBe('/agents');
  });
});

describe('landingPath for an MCP client sign-in', () => {
  it('keeps the consent page /connect/<uid> for any signed-in user (it is no menu page)', () => {
    expect(landingPath(user('agent_creator'), '/connect/abc_DEF-123')).toBe('/connect/abc_DEF-123');
    expect(landingPath(user('agent_creator'), '/connect/../users')).not.toBe('/connect/../users');
  });
});
