import type { PolicyAction, RiskLevel } from './enums.js';
import { globSpecificity, matchGlob, MAX_TOOL_NAME_LENGTH } from './glob.js';

// The tool policy: which access rule decides a tool call, and what it decides. Pure: callers
// (admin-api's dry run, mcp-gateway, tool-gate) load the rules and pass them in.

/** The fields of an access rule the policy looks at; callers may pass richer rows. */
export interface PolicyRule {
  id: string;
  subjectType: 'user' | 'agent';
  subjectId: string;
  /** A tool provider id, or `*` for every provider. */
  providerId: string;
  action: PolicyAction;
  toolPattern: string;
  riskLevel: RiskLevel | null;
  createdAt: Date | string;
}

export interface PolicyInput<R extends PolicyRule> {
  rules: readonly R[];
  /** The real end user; null/undefined skips the user-level steps. */
  userId?: string | null;
  /** The calling agent; null/undefined skips the agent-level steps. */
  agentId?: string | null;
  providerId: string;
  toolName: string;
}

export interface PolicyDecision<R extends PolicyRule> {
  action: PolicyAction;
  risk: RiskLevel;
  matchedRule: R | null;
}

/** Risk reported when the deciding rule names none (and `high` when nothing matched: default deny). */
export const DEFAULT_RISK: Record<PolicyAction, RiskLevel> = {
  allow: 'low',
  require_confirmation: 'medium',
  deny: 'high',
};

type Subject = 'user' | 'agent';
type ActionClass = 'deny' | 'allow';
interface Step {
  subjects: Subject[];
  wildcardProvider: boolean;
  actionClass: ActionClass;
}

/**
 * The spec's evaluation order. `require_confirmation` is an allow-class rule (it grants the call,
 * gated by a human), so a deny at the same step or an earlier one wins over it. Step 5 holds the
 * `providerId: '*'` rules of both the user and the agent: every wildcard deny is checked before
 * any wildcard allow; within a step a user's rule is preferred over the agent's.
 */
const ORDER: Step[] = [
  { subjects: ['user'], wildcardProvider: false, actionClass: 'deny' },
  { subjects: ['user'], wildcardProvider: false, actionClass: 'allow' },
  { subjects: ['agent'], wildcardProvider: false, actionClass: 'deny' },
  { subjects: ['agent'], wildcardProvider: false, actionClass: 'allow' },
  { subjects: ['user', 'agent'], wildcardProvider: true, actionClass: 'deny' },
  { subjects: ['user', 'agent'], wildcardProvider: true, actionClass: 'allow' },
];

/**
 * Decides a tool call. Within one step the winner is: the user's rule before the agent's (step 5
 * only), then the most specific toolPattern, then `require_confirmation` before `allow` (the
 * stricter outcome on a tie), then the earliest created (then id, for a stable answer).
 * No matching rule: deny.
 */
export function evaluatePolicy<R extends PolicyRule>(input: PolicyInput<R>): PolicyDecision<R> {
  const subjectIds: Record<Subject, string | null> = { user: input.userId ?? null, agent: input.agentId ?? null };
  for (const step of ORDER) {
    const candidates = input.rules.filter((rule) => {
      if (!step.subjects.includes(rule.subjectType)) return false;
      const subjectId = subjectIds[rule.subjectType];
      if (subjectId === null || rule.subjectId !== subjectId) return false;
      if (step.wildcardProvider ? rule.providerId !== '*' : rule.providerId !== input.providerId) return false;
      if ((rule.action === 'deny' ? 'deny' : 'allow') !== step.actionClass) return false;
      return matchGlob(rule.toolPattern, input.toolName);
    });
    const winner = candidates.sort(compareWithinStep)[0];
    if (winner) {
      return { action: winner.action, risk: winner.riskLevel ?? DEFAULT_RISK[winner.action], matchedRule: winner };
    }
  }
  return { action: 'deny', risk: DEFAULT_RISK.deny, matchedRule: null };
}

function compareWithinStep(a: PolicyRule, b: PolicyRule): number {
  return (
    subjectRank(a) - subjectRank(b) ||
    globSpecificity(b.toolPattern) - globSpecificity(a.toolPattern) ||
    actionRank(a) - actionRank(b) ||
    new Date(a.createdAt).getTime() - new Date(b.createdAt).getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

const subjectRank = (rule: PolicyRule): number => (rule.subjectType === 'user' ? 0 : 1);
const actionRank = (rule: PolicyRule): number => (rule.action === 'require_confirmation' ? 0 : 1);

/** The fields of a tool provider that routing looks at. */
export interface RoutableProvider {
  id: string;
  name: string;
  pattern: string;
  priority: number;
}

/**
 * The routing order, declared once: the highest priority, then the most specific pattern, then
 * the name (alphabetical), then the id, so no two providers tie. The catalog keeps its providers
 * in this order and `resolveProvider` picks by it, so a listing and a call always agree.
 */
export function compareRouting(a: RoutableProvider, b: RoutableProvider): number {
  return (
    b.priority - a.priority ||
    globSpecificity(b.pattern) - globSpecificity(a.pattern) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** The provider that owns a tool name: the first provider whose pattern matches, in routing order (`compareRouting`). */
export function resolveProvider<P extends RoutableProvider>(providers: readonly P[], toolName: string): P | null {
  return providers.filter((p) => matchGlob(p.pattern, toolName)).sort(compareRouting)[0] ?? null;
}

/** Control and invisible format characters (C0, DEL, C1, zero-width and bidi marks, BOM). */
const HIDDEN_CHARACTERS = /[\p{Cc}\p{Cf}]/u;

/**
 * Why a tool name cannot be decided, or null when it can. Rules match names exactly, so a name
 * differing from a denied one only by hidden characters or surrounding spaces would slip past a
 * deny rule to an upstream that trims or ignores them: such names are refused before any rule.
 */
export function toolNameProblem(name: string): string | null {
  if (name === '') return 'must be a non-empty string';
  if (name.length > MAX_TOOL_NAME_LENGTH) return `is longer than ${MAX_TOOL_NAME_LENGTH} characters`;
  if (HIDDEN_CHARACTERS.test(name)) return 'must not contain control characters';
  if (name.trim() !== name) return 'must not start or end with whitespace';
  return null;
}
