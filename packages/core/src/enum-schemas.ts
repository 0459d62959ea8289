import { z } from 'zod';
import { RISK_LEVELS } from './enums.js';

/**
 * Zod schemas of the shared vocabularies (see `enums.ts`). A route that names one for OpenAPI
 * derives its own from the tuple (`z.enum(RISK_LEVELS).openapi('RiskLevel')`): `.openapi()` is
 * only on schemas built after `@hono/zod-openapi` is loaded.
 */

/** Parses a RiskLevel. */
export const riskLevelSchema = z.enum(RISK_LEVELS);
