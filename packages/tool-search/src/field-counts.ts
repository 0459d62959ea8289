import { RANKING, type Field } from './ranking.js';

/** A tool's term counts per field, and the terms its description says only past its opening. */
export interface FieldCounts {
  counts: Map<string, number>[];
  deepOnly: ReadonlySet<string>;
}

/**
 * Counts each field's terms (its words, then its joined PascalCase names, which count in full).
 * A description's words past its first RANKING.descriptionHead count RANKING.deepWeight each: a
 * long description's detail (guardrails, parameter notes, examples) says less about what the tool
 * is for than its opening, and it matches a weak expansion of almost any query word. The terms said
 * only there (in no other field) are returned too: they earn no coverage credit.
 */
export function fieldCounts(
  fields: readonly Field[],
  words: readonly (readonly string[])[],
  all: readonly (readonly string[])[],
): FieldCounts {
  const opening = new Set<string>();
  const counts = all.map((list, f) => {
    const deepFrom = fields[f] === 'description' ? RANKING.descriptionHead : Infinity;
    const map = new Map<string, number>();
    list.forEach((term, i) => {
      const deep = i >= deepFrom && i < words[f]!.length;
      if (!deep) opening.add(term);
      map.set(term, (map.get(term) ?? 0) + (deep ? RANKING.deepWeight : 1));
    });
    return map;
  });
  const deepOnly = new Set<string>();
  for (const term of counts[fields.indexOf('description')]!.keys()) if (!opening.has(term)) deepOnly.add(term);
  return { counts, deepOnly };
}
