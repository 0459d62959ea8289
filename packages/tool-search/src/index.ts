export { terms, stem, words } from './terms.js';
export { relatedTerms } from './thesaurus.js';
export { fieldsOf, FIELD_LIMITS, type ListedTool, type ToolFields } from './tool-fields.js';
export { ToolIndex, RANKING, SEARCH_LIMITS, type ProviderLabel, type SameTool, type SearchHit } from './tool-index.js';
export { ToolIndexCache } from './index-cache.js';
export { verbSynonyms, WORDNET_LIMITS } from './wordnet.js';
export { isWeakResult, SEARCH_GUIDANCE, WEAK_COVERAGE } from './search-guidance.js';
export {
  BROWSE_LIMITS,
  oneLine,
  providerSummaries,
  providerTools,
  type BrowseEntry,
  type ProviderSummary,
  type ToolSummary,
} from './tool-browse.js';
export {
  EMBEDDINGS_ENV,
  EMBEDDINGS_LIMITS,
  EmbeddingsClient,
  embeddingsConfigFromEnv,
  type Embedder,
  type EmbeddingsConfig,
} from './embeddings-client.js';
export { definitionText, FUSION, HybridSearch, hybridSearchFromEnv, ToolVectors } from './semantic-ranking.js';
export { CALL_TOOL, META_TOOLS, SEARCH_RESULT_LIMITS, SEARCH_TOOLS } from './meta-tools.js';
export { exposedTool, visibleSetKey } from './visible-set-key.js';
