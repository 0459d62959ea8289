export { errorHandler, notFoundHandler, validationErrorFrom, zodIssues } from './error-handler.js';
export { parseJson, parseQuery } from './validate.js';
export { requestId } from './request-id.js';
