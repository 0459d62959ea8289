import { RANKING, type Field } from './ranking.js';

/** How far a term's match in a tool counts toward coverage: said only deep in the description, only in it, or elsewhere too. */
export const REACH = { deep: 0, description: 1, full: 2 } as const;

/**
 * The reach of each term a tool says only in its description (a term absent from the map reaches
 * in full): `deep` when every mention is past the description's first RANKING.descriptionHead
 * words, else `description`. A long description's detail (guardrails, parameter notes, examples)
 * says little about what the tool is for, yet matches a weak expansion of almost any query word.
 * `words` are each field's words in order, `all` the same followed by the field's joined
 * PascalCase names (which count as said up front).
 */
export function descriptionReach(
  fields: readonly Field[],
  words: readonly (readonly string[])[],
  all: readonly (readonly string[])[],
): Map<string, number> {
  const description = fields.indexOf('description');
  const elsewhere = new Set<string>();
  const opening = new Set<string>();
  all.forEach((list, f) =>
    list.forEach((term, i) => {
      if (f !== description) elsewhere.add(term);
      else if (i < RANKING.descriptionHead || i >= words[f]!.length) opening.add(term);
    }),
  );
  const reach = new Map<string, number>();
  for (const term of all[description]!)
    if (!elsewhere.has(term)) reach.set(term, opening.has(term) ? REACH.description : REACH.deep);
  return reach;
}
