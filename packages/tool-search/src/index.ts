export { terms, stem, words } from './terms.js';
export { relatedTerms } from './thesaurus.js';
export { fieldsOf, FIELD_LIMITS, type ListedTool, type ToolFields } from './tool-fields.js';
export { ToolIndex, RANKING, SEARCH_LIMITS, type SearchHit } from './tool-index.js';
export { ToolIndexCache } from './index-cache.js';
export { verbSynonyms, WORDNET_LIMITS } from './wordnet.js';
