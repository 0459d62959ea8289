// What the benchmark (packages/bench, `tool-search`) measures of the search surface: the meta-tools a client lists, the exposed copy and the per-request set key.
export { CALL_TOOL, META_TOOLS, SEARCH_RESULT_LIMITS, SEARCH_TOOLS } from './meta-tools.js';
export { exposedTool, visibleSetKey } from './visible-set-key.js';
