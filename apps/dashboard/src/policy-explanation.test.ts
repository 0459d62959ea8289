import { describe, expect, it } from 'vitest';
import { explainDecision, stepOf } from './policy-explanation.js';
import type { AccessRule } from './types.js';

const rule = (over: Partial<AccessRule>): AccessRule => ({
  id: 'r1',
  subjectType: 'agent',
  subjectId: 'a1',
  providerId: 'p1',
  action: 'allow',
  toolPattern: '*',
  riskLevel: null,
  confirmationMode: null,
  confirmCarriers: null,
  description: null,
  tenantId: null,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  ...over,
});

describe('stepOf', () => {
  it('places each rule in the spec evaluation order', () => {
    expect(stepOf(rule({ subjectType: 'user', action: 'deny' }))).toBe(0);
    expect(stepOf(rule({ subjectType: 'user', action: 'require_confirmation' }))).toBe(1);
    expect(stepOf(rule({ action: 'deny' }))).toBe(2);
    expect(stepOf(rule({ action: 'allow' }))).toBe(3);
    expect(stepOf(rule({ providerId: '*', action: 'deny', subjectType: 'user' }))).toBe(4);
  });
});

describe('explainDecision', () => {
  it('names the matched rule, its step and the outcome', () => {
    const e = explainDecision(
      {
        action: 'require_confirmation',
        risk: 'high',
        matchedRule: rule({ id: 'rule-9', action: 'require_confirmation', toolPattern: 'delete_*' }),
      },
      { toolName: 'delete_repo' },
    );
    expect(e.step).toBe(3);
    expect(e.summary).toBe(
      'delete_repo would be held for confirmation (risk high): decided at step 4 (Agent-level allow rules) by rule rule-9, a require confirmation rule for agent a1 on provider p1, tool pattern "delete_*".',
    );
  });

  it('uses display names when it knows them, and the right article', () => {
    const nameOf = (kind: string, id: string) =>
      kind === 'agent' ? 'support-bot' : kind === 'provider' ? 'github-tools' : id;
    const e = explainDecision(
      { action: 'allow', risk: 'low', matchedRule: rule({ id: 'r2' }) },
      { toolName: 'echo', nameOf },
    );
    expect(e.summary).toBe(
      'echo would be allowed (risk low): decided at step 4 (Agent-level allow rules) by rule r2, an allow rule for agent support-bot on provider github-tools, tool pattern "*".',
    );
  });

  it('explains the default deny when nothing matched', () => {
    const e = explainDecision({ action: 'deny', risk: 'high', matchedRule: null }, { toolName: 'x' });
    expect(e.step).toBe(5);
    expect(e.summary).toMatch(/^x would be denied \(risk high\): no rule matched/);
  });
});
