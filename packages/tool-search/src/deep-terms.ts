import { RANKING, type Field } from './ranking.js';

/**
 * The terms a tool says only deep in its description: past its first RANKING.descriptionHead words
 * and in no other field. A long description's detail (guardrails, parameter notes, examples) says
 * little about what the tool is for, yet matches a weak expansion of almost any query word; such a
 * match still scores, but earns no coverage credit. `words` are each field's words in order, `all`
 * the same followed by the field's joined PascalCase names (which count as said up front).
 */
export function deepOnlyTerms(
  fields: readonly Field[],
  words: readonly (readonly string[])[],
  all: readonly (readonly string[])[],
): ReadonlySet<string> {
  const description = fields.indexOf('description');
  const opening = new Set<string>();
  all.forEach((list, f) =>
    list.forEach((term, i) => {
      if (f !== description || i < RANKING.descriptionHead || i >= words[f]!.length) opening.add(term);
    }),
  );
  const deep = new Set<string>();
  for (const term of all[description]!) if (!opening.has(term)) deep.add(term);
  return deep;
}
