export { errorHandler, notFoundHandler, validationErrorFrom, zodIssues } from './error-handler.js';
export { parseJson, parseQuery } from './validate.js';
export { requestId } from './request-id.js';
export { assertJsonDepth, jsonDepthLimit, MAX_JSON_DEPTH } from './json-depth.js';
export { requestHeader, requestHeaders, type RequestHeaders } from './request-headers.js';
