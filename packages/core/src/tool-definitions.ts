import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** The parts of a listed tool a pin covers: what a model reads and what a call sends (title and `_meta` are left out). */
export interface ToolDefinition {
  name: string;
  description?: unknown;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

/** A definition's two hashes: of the whole definition, and of it without its name (an identical tool renamed has the same body hash). */
export interface DefinitionHashes {
  hash: string;
  bodyHash: string;
}

/** The pinned fields of a listed tool, absent ones left out (so an absent and an undefined field hash alike). */
export function definitionOf(tool: Record<string, unknown> & { name: string }): ToolDefinition {
  const definition: ToolDefinition = { name: tool.name };
  for (const field of PINNED_FIELDS) if (tool[field] !== undefined) definition[field] = tool[field];
  return definition;
}

const PINNED_FIELDS = ['description', 'inputSchema', 'outputSchema', 'annotations'] as const;

/** SHA-256 (hex) of the definition's canonical JSON, with and without its name; stable under key order. */
export function definitionHashes(definition: ToolDefinition): DefinitionHashes {
  const { name: _name, ...body } = definition;
  return { hash: sha256(canonicalJson(definition)), bodyHash: sha256(canonicalJson(body)) };
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
