export { terms, stem, words } from './terms.js';
export { relatedTerms } from './thesaurus.js';
export { fieldsOf, FIELD_LIMITS, type ListedTool, type ToolFields } from './tool-fields.js';
export { ToolIndex, RANKING, SEARCH_LIMITS, type SearchHit } from './tool-index.js';
export { ToolIndexCache } from './index-cache.js';
export { verbSynonyms, WORDNET_LIMITS } from './wordnet.js';
export { CALL_TOOL, META_TOOLS, SEARCH_RESULT_LIMITS, SEARCH_TOOLS } from './meta-tools.js';
export { exposedTool, visibleSetKey } from './visible-set-key.js';
