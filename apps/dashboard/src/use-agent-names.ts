import { useCallback } from 'react';
import type { Agent } from './types.js';
import { useResource } from './use-resource.js';

/** Agent names for pages that only hold ids (audit rows, held calls); an unknown id stays as it is. */
export function useAgentNames(): (id: string | null) => string | null {
  const agents = useResource<{ agents: Agent[] }>('/admin/agents');
  const list = agents.data?.agents;
  return useCallback((id) => (id === null ? null : (list?.find((a) => a.id === id)?.name ?? id)), [list]);
}
