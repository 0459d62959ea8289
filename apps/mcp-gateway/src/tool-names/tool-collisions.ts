import type { ExposedTool } from './tool-naming.js';

/** One of the names a tool is exposed under when several providers offer its upstream name. */
export interface ToolCollision {
  /** The upstream name the providers share. */
  toolName: string;
  /** What a client lists and calls; a call of it goes to this provider's `toolName`. */
  exposedName: string;
  providerId: string;
  providerName: string;
}

/** The exposed tools whose upstream name more than one provider offers, by upstream name then exposed name. */
export function collisionsOf(exposed: readonly ExposedTool[]): ToolCollision[] {
  const providersOf = new Map<string, Set<string>>();
  for (const { upstreamName, provider } of exposed)
    providersOf.set(upstreamName, (providersOf.get(upstreamName) ?? new Set()).add(provider.id));
  return exposed
    .filter((t) => providersOf.get(t.upstreamName)!.size > 1)
    .map((t) => ({
      toolName: t.upstreamName,
      exposedName: t.exposedName,
      providerId: t.provider.id,
      providerName: t.provider.name,
    }))
    .sort((a, b) => compare(a.toolName, b.toolName) || compare(a.exposedName, b.exposedName));
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
