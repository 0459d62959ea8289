export { createCatalog } from './catalog.js';
export type { AgentCatalog, Catalog, CatalogDeps, CatalogOptions, ProviderCatalog, RuleCatalog } from './catalog.js';
export type { Agent, AgentPatch, AgentRecord, AgentSummary, NewAgentInput, RequiredCredential } from './agents.js';
export type { NewToolProviderInput, ProviderRecord, ToolProvider, ToolProviderPatch } from './tool-providers.js';
export type {
  AccessRule,
  AccessRuleFilters,
  AccessRulePatch,
  AgentRuleInput,
  ConfirmationMode,
  DecisionInput,
  EvaluationInput,
  NewAccessRuleInput,
  SubjectType,
} from './access-rules.js';
export { assertTenantWritable } from './tenant-writes.js';
export { invalidField } from './invalid-field.js';
