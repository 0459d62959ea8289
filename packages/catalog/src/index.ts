export { createCatalog } from './catalog.js';
export type { AgentCatalog, Catalog, CatalogOptions, ProviderCatalog, RuleCatalog } from './catalog.js';
export { createCatalogAdmin } from './catalog-admin.js';
export { createToolPinAdmin } from './tool-pin-admin.js';
export type {
  PinnedDefinition,
  ProviderPinning,
  ToolPin,
  ToolPinAdmin,
  ToolPinFilter,
  ToolPinReview,
} from './tool-pin-admin.js';
export type { AgentAdmin, CatalogAdmin, ProviderAdmin, RuleAdmin } from './catalog-admin.js';
export type { CatalogDeps } from './catalog-context.js';
export type { AgentRecord } from './agent-directory.js';
export type { ProviderRecord } from './provider-directory.js';
export type { DecisionInput } from './rule-directory.js';
export type { Agent, AgentPatch, AgentSummary, NewAgentInput, RequiredCredential } from './agents.js';
export type { NewToolProviderInput, ProviderConnection, ToolProvider, ToolProviderPatch } from './tool-providers.js';
export { NAME_PREFIX_RULE } from './tool-providers.js';
export { isPerUserAuth } from './provider-credential-scope.js';
export type {
  AccessRule,
  AccessRuleFilters,
  AccessRulePatch,
  AgentRuleInput,
  ConfirmationMode,
  EvaluationInput,
  NewAccessRuleInput,
  SubjectType,
} from './access-rules.js';
export { assertTenantWritable } from './tenant-writes.js';
export { invalidField } from './invalid-field.js';
