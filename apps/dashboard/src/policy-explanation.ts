import type { AccessRule, PolicyDecision } from './types.js';

/** The spec's evaluation order, as the evaluate panel lists it. */
export const EVALUATION_STEPS = [
  'User-level deny rules',
  'User-level allow rules',
  'Agent-level deny rules',
  'Agent-level allow rules',
  'Wildcard-provider rules (deny first, then allow)',
  'No match: denied',
] as const;

export interface DecisionExplanation {
  /** Index into EVALUATION_STEPS of the step that decided. */
  step: number;
  summary: string;
}

const ACTION_WORDS = { allow: 'allowed', deny: 'denied', require_confirmation: 'held for confirmation' } as const;

/** Which step of the evaluation order a rule belongs to (require_confirmation is allow-class). */
export function stepOf(rule: Pick<AccessRule, 'subjectType' | 'providerId' | 'action'>): number {
  if (rule.providerId === '*') return 4;
  const deny = rule.action === 'deny';
  return rule.subjectType === 'user' ? (deny ? 0 : 1) : deny ? 2 : 3;
}

/** Display names for ids the panel knows (agents, providers); unknown ids are shown as they are. */
export type NameOf = (kind: 'user' | 'agent' | 'provider', id: string) => string;

/** Puts the dry-run answer of `POST /admin/provider-access/evaluate` into words for the panel. */
export function explainDecision(
  decision: PolicyDecision,
  input: { toolName: string; nameOf?: NameOf },
): DecisionExplanation {
  const nameOf: NameOf = input.nameOf ?? ((_kind, id) => id);
  const outcome = `${input.toolName} would be ${ACTION_WORDS[decision.action]} (risk ${decision.risk})`;
  const rule = decision.matchedRule;
  if (!rule) {
    return {
      step: 5,
      summary: `${outcome}: no rule matched, and agents are on a whitelist, so the call is denied by default.`,
    };
  }
  const step = stepOf(rule);
  const provider = rule.providerId === '*' ? 'every provider' : `provider ${nameOf('provider', rule.providerId)}`;
  const kind = rule.action.replace('_', ' ');
  return {
    step,
    summary:
      `${outcome}: decided at step ${step + 1} (${EVALUATION_STEPS[step]}) by rule ${rule.id}, ` +
      `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} rule for ${rule.subjectType} ${nameOf(rule.subjectType, rule.subjectId)} on ${provider}, tool pattern "${rule.toolPattern}".`,
  };
}
