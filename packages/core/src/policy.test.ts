import { describe, expect, it } from 'vitest';
import { compareRouting, evaluatePolicy, resolveProvider, toolNameProblem, type PolicyRule } from './policy.js';

let seq = 0;
function rule(partial: Partial<PolicyRule> & Pick<PolicyRule, 'subjectType' | 'action'>): PolicyRule {
  seq += 1;
  return {
    id: partial.id ?? `r${seq}`,
    subjectId: partial.subjectType === 'user' ? 'u1' : 'a1',
    providerId: 'p1',
    toolPattern: '*',
    riskLevel: null,
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)),
    ...partial,
  };
}

const call = { userId: 'u1', agentId: 'a1', providerId: 'p1', toolName: 'github_create_issue' };
const decide = (rules: PolicyRule[], overrides: Partial<typeof call> = {}) =>
  evaluatePolicy({ rules, ...call, ...overrides });

describe('evaluatePolicy: evaluation order', () => {
  const userDeny = rule({ subjectType: 'user', action: 'deny' });
  const userAllow = rule({ subjectType: 'user', action: 'allow' });
  const agentDeny = rule({ subjectType: 'agent', action: 'deny' });
  const agentAllow = rule({ subjectType: 'agent', action: 'allow' });
  const wildDeny = rule({ subjectType: 'agent', action: 'deny', providerId: '*' });
  const wildAllow = rule({ subjectType: 'agent', action: 'allow', providerId: '*' });
  const all = [wildAllow, wildDeny, agentAllow, agentDeny, userAllow, userDeny];

  it('1: a user-level deny beats everything', () => {
    expect(decide(all)).toMatchObject({ action: 'deny', matchedRule: userDeny });
  });

  it('2: a user-level allow beats agent-level and wildcard rules', () => {
    expect(decide(all.filter((r) => r !== userDeny))).toMatchObject({ action: 'allow', matchedRule: userAllow });
  });

  it('3: an agent-level deny comes next', () => {
    expect(decide([wildAllow, wildDeny, agentAllow, agentDeny])).toMatchObject({
      action: 'deny',
      matchedRule: agentDeny,
    });
  });

  it('4: then an agent-level allow', () => {
    expect(decide([wildAllow, wildDeny, agentAllow])).toMatchObject({ action: 'allow', matchedRule: agentAllow });
  });

  it('5: wildcard-provider rules only when no provider-specific rule matched, deny first', () => {
    expect(decide([wildAllow, wildDeny])).toMatchObject({ action: 'deny', matchedRule: wildDeny });
    expect(decide([wildAllow])).toMatchObject({ action: 'allow', matchedRule: wildAllow });
  });

  it('5: any wildcard deny (user or agent) precedes every wildcard allow', () => {
    const userWildAllow = rule({ subjectType: 'user', action: 'allow', providerId: '*' });
    expect(decide([userWildAllow, wildDeny])).toMatchObject({ action: 'deny', matchedRule: wildDeny });
  });

  it("5: within a wildcard step the user's rule is preferred over the agent's", () => {
    const userWildConfirm = rule({ subjectType: 'user', action: 'require_confirmation', providerId: '*' });
    expect(decide([wildAllow, userWildConfirm])).toMatchObject({
      action: 'require_confirmation',
      matchedRule: userWildConfirm,
    });
  });

  it('6: no matching rule denies with high risk', () => {
    expect(decide([])).toEqual({ action: 'deny', risk: 'high', matchedRule: null });
  });

  it('ignores rules of other subjects and other providers', () => {
    const rules = [
      rule({ subjectType: 'user', action: 'allow', subjectId: 'someone-else' }),
      rule({ subjectType: 'agent', action: 'allow', subjectId: 'other-agent' }),
      rule({ subjectType: 'agent', action: 'allow', providerId: 'p2' }),
    ];
    expect(decide(rules)).toMatchObject({ action: 'deny', matchedRule: null });
  });

  it('skips the user steps without a user and the agent steps without an agent', () => {
    expect(decide([userAllow, agentAllow], { userId: undefined })).toMatchObject({ matchedRule: agentAllow });
    expect(
      evaluatePolicy({ rules: [agentAllow, wildAllow], userId: 'u1', agentId: null, providerId: 'p1', toolName: 'x' }),
    ).toMatchObject({
      action: 'deny',
      matchedRule: null,
    });
  });

  it('a user id equal to an agent id does not make agent rules user rules', () => {
    const agentRuleNamedU1 = rule({ subjectType: 'agent', subjectId: 'u1', action: 'allow' });
    expect(decide([agentRuleNamedU1], { agentId: 'a1' })).toMatchObject({ action: 'deny', matchedRule: null });
  });
});

describe('evaluatePolicy: require_confirmation', () => {
  it('is an allow-class rule: it decides at the allow step of its level', () => {
    const confirm = rule({ subjectType: 'user', action: 'require_confirmation' });
    const agentDeny = rule({ subjectType: 'agent', action: 'deny' });
    expect(decide([agentDeny, confirm])).toEqual({
      action: 'require_confirmation',
      risk: 'medium',
      matchedRule: confirm,
    });
  });

  it('loses to a deny at the same level', () => {
    const confirm = rule({ subjectType: 'agent', action: 'require_confirmation', toolPattern: 'github_create_issue' });
    const deny = rule({ subjectType: 'agent', action: 'deny', toolPattern: 'github_*' });
    expect(decide([confirm, deny])).toMatchObject({ action: 'deny', matchedRule: deny });
  });

  it('beats an allow of the same specificity, whichever was created first', () => {
    const allow = rule({ subjectType: 'agent', action: 'allow', toolPattern: 'github_*' });
    const confirm = rule({ subjectType: 'agent', action: 'require_confirmation', toolPattern: 'github_*' });
    expect(decide([allow, confirm])).toMatchObject({ action: 'require_confirmation', matchedRule: confirm });
  });

  it('loses to a more specific allow', () => {
    const confirm = rule({ subjectType: 'agent', action: 'require_confirmation', toolPattern: 'github_*' });
    const allow = rule({ subjectType: 'agent', action: 'allow', toolPattern: 'github_create_*' });
    expect(decide([confirm, allow])).toMatchObject({ action: 'allow', matchedRule: allow });
  });
});

describe('evaluatePolicy: tool patterns and ties', () => {
  it('matches tool names by glob', () => {
    const readOnly = rule({ subjectType: 'agent', action: 'allow', toolPattern: 'github_get_*' });
    expect(decide([readOnly]).action).toBe('deny');
    expect(decide([readOnly], { toolName: 'github_get_issue' }).action).toBe('allow');
    const oneChar = rule({ subjectType: 'agent', action: 'allow', toolPattern: 'tool_?' });
    expect(decide([oneChar], { toolName: 'tool_a' }).action).toBe('allow');
    expect(decide([oneChar], { toolName: 'tool_ab' }).action).toBe('deny');
  });

  it('prefers the most specific pattern among matches of one step', () => {
    const broad = rule({ subjectType: 'user', action: 'allow', toolPattern: '*' });
    const narrow = rule({
      subjectType: 'user',
      action: 'allow',
      toolPattern: 'github_create_*',
      riskLevel: 'critical',
    });
    const middle = rule({ subjectType: 'user', action: 'allow', toolPattern: 'github_*' });
    expect(decide([broad, middle, narrow]).matchedRule).toBe(narrow);
  });

  it('on equal specificity prefers the earliest created', () => {
    const later = rule({
      subjectType: 'agent',
      action: 'allow',
      toolPattern: 'github_*',
      createdAt: '2025-02-01T00:00:00Z',
    });
    const earlier = rule({
      subjectType: 'agent',
      action: 'allow',
      toolPattern: 'github_*',
      createdAt: '2025-01-01T00:00:00Z',
    });
    expect(decide([later, earlier]).matchedRule).toBe(earlier);
  });

  it('on equal creation time falls back to the id, so the answer is stable', () => {
    const at = '2025-01-01T00:00:00Z';
    const b = rule({ id: 'b', subjectType: 'agent', action: 'allow', createdAt: at });
    const a = rule({ id: 'a', subjectType: 'agent', action: 'allow', createdAt: at });
    expect(decide([b, a]).matchedRule).toBe(a);
    expect(decide([a, b]).matchedRule).toBe(a);
  });

  it("does not reorder the caller's array", () => {
    const rules = [
      rule({ subjectType: 'agent', action: 'allow', toolPattern: '*' }),
      rule({ subjectType: 'agent', action: 'allow', toolPattern: 'github_*' }),
    ];
    const before = [...rules];
    decide(rules);
    expect(rules).toEqual(before);
  });
});

describe('evaluatePolicy: risk', () => {
  it("carries the matched rule's riskLevel", () => {
    expect(decide([rule({ subjectType: 'agent', action: 'allow', riskLevel: 'critical' })]).risk).toBe('critical');
    expect(decide([rule({ subjectType: 'user', action: 'deny', riskLevel: 'low' })]).risk).toBe('low');
    expect(decide([rule({ subjectType: 'agent', action: 'require_confirmation', riskLevel: 'high' })]).risk).toBe(
      'high',
    );
  });

  it('defaults to low for allow, medium for require_confirmation, high for deny', () => {
    expect(decide([rule({ subjectType: 'agent', action: 'allow' })]).risk).toBe('low');
    expect(decide([rule({ subjectType: 'agent', action: 'require_confirmation' })]).risk).toBe('medium');
    expect(decide([rule({ subjectType: 'agent', action: 'deny' })]).risk).toBe('high');
  });
});

describe('resolveProvider', () => {
  const github = { id: 'p-github', name: 'github', pattern: 'github_*', priority: 0 };
  const catchAll = { id: 'p-default', name: 'default', pattern: '*', priority: 0 };
  const override = { id: 'p-override', name: 'override', pattern: '*', priority: 10 };

  it('returns the only matching provider, or null', () => {
    expect(resolveProvider([github], 'github_list')).toBe(github);
    expect(resolveProvider([github], 'slack_post')).toBeNull();
  });

  it('checks higher priority first', () => {
    expect(resolveProvider([github, catchAll, override], 'github_list')).toBe(override);
  });

  it('on equal priority prefers the most specific pattern', () => {
    expect(resolveProvider([catchAll, github], 'github_list')).toBe(github);
    expect(resolveProvider([catchAll, github], 'slack_post')).toBe(catchAll);
  });

  it('on equal priority and specificity prefers the name', () => {
    const b = { id: 'p-b', name: 'b', pattern: 'x*', priority: 1 };
    const a = { id: 'p-a', name: 'a', pattern: '*1', priority: 1 };
    expect(resolveProvider([b, a], 'x1')).toBe(a);
    expect(resolveProvider([a, b], 'x1')).toBe(a);
  });

  it('on equal names too prefers the smaller id, whatever the input order (one order for routing and listings)', () => {
    const second = { id: 'p-2', name: 'twin', pattern: '*', priority: 0 };
    const first = { id: 'p-1', name: 'twin', pattern: '*', priority: 0 };
    expect(resolveProvider([second, first], 'anything')).toBe(first);
    expect(resolveProvider([first, second], 'anything')).toBe(first);
    expect([second, catchAll, override, github, first].sort(compareRouting).map((p) => p.id)).toEqual([
      'p-override',
      'p-github',
      'p-default',
      'p-1',
      'p-2',
    ]);
  });
});

describe('toolNameProblem', () => {
  it('accepts ordinary names, unicode letters included', () => {
    for (const name of ['read_file', 'fs.read-file', 'Lire_fichier_é', 'a'.repeat(256)])
      expect(toolNameProblem(name)).toBeNull();
  });

  it('refuses empty and over-long names, control and invisible characters, surrounding whitespace', () => {
    expect(toolNameProblem('')).toMatch(/non-empty/);
    expect(toolNameProblem('a'.repeat(257))).toMatch(/longer than 256/);
    for (const name of [
      'delete\u0000all',
      'delete_all\n',
      'del\u007fete',
      'delete\u200ball',
      '\u202edelete',
      'x\u0085y',
      '\ufeffdelete',
    ]) {
      expect(toolNameProblem(name)).toMatch(/control characters/);
    }
    for (const name of [' delete_all', 'delete_all ', '\u00a0delete_all', 'delete_all\u3000'])
      expect(toolNameProblem(name)).toMatch(/whitespace/);
  });
});
