import { useCallback } from 'react';
import { useResource } from './use-resource.js';

/** A lookup from id to name over one list the API answers (`{ <key>: [{ id, name }] }`); an unknown id stays as it is. */
function useNames(path: string, key: string): (id: string | null) => string | null {
  const resource = useResource<Record<string, { id: string; name: string }[]>>(path);
  const list = resource.data?.[key];
  return useCallback((id) => (id === null ? null : (list?.find((item) => item.id === id)?.name ?? id)), [list]);
}

/** Agent names for pages that only hold ids (audit rows, held calls). */
export const useAgentNames = (): ((id: string | null) => string | null) => useNames('/admin/agents', 'agents');

/** Tool provider names for held calls, which carry the provider's id only. */
export const useProviderNames = (): ((id: string | null) => string | null) =>
  useNames('/admin/tool-providers', 'providers');
