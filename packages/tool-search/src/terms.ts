/** Longest token kept: longer runs (hashes, base64) carry no meaning and would only grow the index. */
const MAX_TOKEN_CHARS = 40;

/** Words that say nothing about which tool is meant ("please", "a", "the", …): dropped from documents and queries alike. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could do does for from has have how i if in into is it its me my of on or our please should so some than that the ' +
    'their them then there these this those to too us was we what when where which while who will with would you your want need like just also via using use ' +
    'any each every given one'
  ).split(' '),
);

/** English particles of phrasal verbs, which may stand after the object ("pass this email along", "turn the alerts off"). */
export const PARTICLES: ReadonlySet<string> = new Set([
  'up',
  'down',
  'off',
  'on',
  'out',
  'back',
  'along',
  'over',
  'away',
  'in',
  'around',
  'through',
]);

/** How many words may stand between a verb and its particle ("turn the staging alerts off"). */
const PARTICLE_GAP = 3;

/**
 * The two-word verbs a query may hold, as WordNet spells them ("call_off"): each pair of adjacent
 * words, and each word with a particle up to PARTICLE_GAP words after it ("pass this email along" → "pass_along").
 */
export function wordPairs(all: readonly string[]): string[] {
  const pairs = new Set<string>();
  for (let i = 0; i + 1 < all.length; i++) {
    pairs.add(`${all[i]}_${all[i + 1]}`);
    for (let j = i + 2; j < all.length && j <= i + 1 + PARTICLE_GAP; j++)
      if (PARTICLES.has(all[j]!)) pairs.add(`${all[i]}_${all[j]}`);
  }
  return [...pairs];
}

// camelCase and acronym boundaries ("getHTTPStatus" → "get HTTP Status"), letters next to digits.
const LOWER_UPPER = /(\p{Ll})(\p{Lu})/gu;
const ACRONYM_WORD = /(\p{Lu})(\p{Lu}\p{Ll})/gu;
const LETTER_DIGIT = /(\p{L})(\p{N})|(\p{N})(\p{L})/gu;
const ALPHANUMERIC_RUN = /[\p{L}\p{N}]+/gu;
const LETTER_BESIDE_DIGIT = /\p{L}\p{N}|\p{N}\p{L}/u;
/** Short letter-digit codes are names ("s3", "ec2", "k8s", "q3"), kept whole; longer runs ("route53", "sha256sum") split. */
const SHORT_CODE_CHARS = 4;
const SEPARATORS = /[^\p{L}\p{N}]+/u;

/**
 * Splits text into the terms the index and the queries share: camelCase, snake_case, kebab-case
 * and punctuation split, lower-cased, stop words dropped, each term reduced by `stem`. At most
 * `maxChars` of the text are read, so a hostile input costs a bounded amount of work.
 */
export const terms = (text: string, maxChars: number): string[] => words(text, maxChars).map(stem);

/** The words `terms` stems: split, lower-cased, stop words and overlong runs dropped (at most `maxChars` read). */
export const words = (text: string, maxChars: number): string[] => allWords(text, maxChars).filter(isContentWord);

/** Whether a word of `allWords` says something: not a stop word, not a single character. */
export const isContentWord = (word: string): boolean => word.length >= 2 && !STOP_WORDS.has(word);

/** Every word of the text, stop words kept (phrases like "who can see" need them): split, lower-cased, overlong runs dropped (at most `maxChars` read). */
export function allWords(text: string, maxChars: number): string[] {
  const bounded = text.length > maxChars ? text.slice(0, maxChars) : text;
  const cased = bounded.replace(LOWER_UPPER, '$1 $2').replace(ACRONYM_WORD, '$1 $2');
  // Most text has no letter beside a digit: then no run needs looking at (a call per word otherwise).
  const spaced = !LETTER_BESIDE_DIGIT.test(cased)
    ? cased
    : cased.replace(ALPHANUMERIC_RUN, (run: string) =>
        run.length <= SHORT_CODE_CHARS
          ? run
          : run.replace(LETTER_DIGIT, (_m, a, b, c, d) => (a === undefined ? `${c} ${d}` : `${a} ${b}`)),
      );
  return spaced
    .toLowerCase()
    .split(SEPARATORS)
    .filter((word) => word.length > 0 && word.length <= MAX_TOKEN_CHARS);
}

/** A brand-like compound written in PascalCase ("GitHub", "HubSpot", "MongoDB", "DevTools"): a name, which camelCase splitting would break into other words. */
const COMPOUND = /(?<![\p{L}\p{N}])\p{Lu}\p{Ll}+(?:\p{Lu}\p{Ll}+|\p{Lu}{2,}(?!\p{Ll}))+(?![\p{L}\p{N}])/gu;

/**
 * The PascalCase compounds of a text as written ("GitHub"), at most `maxChars` read. Their joined
 * form (`compoundTerm`) is indexed beside their parts, so a query saying "GitHub" meets the tools
 * named "github_…" too, and reads "git" and "hub" as parts of a name, not as words of their own.
 */
export function compounds(text: string, maxChars: number): string[] {
  const bounded = text.length > maxChars ? text.slice(0, maxChars) : text;
  return [...bounded.matchAll(COMPOUND)].map((match) => match[0]).filter((word) => word.length <= MAX_TOKEN_CHARS);
}

/** A compound's one term ("GitHub" → "github"). */
export const compoundTerm = (compound: string): string => stem(compound.toLowerCase());

/**
 * A light English stemmer, so "issues", "issue" and "issuing" meet on one term: -ment nouns
 * become their verb ("attachments" → "attach"); otherwise plural and
 * -ing/-ed/-ation/-ion endings go (-ies/-ied → -y), then a final "e", then a doubled final consonant ("stopped" → "stop").
 * Deliberately small: it only has to be the same on both sides, not linguistically right.
 */
export function stem(word: string): string {
  const known = STEMS.get(word);
  if (known !== undefined) return known;
  const stemmed = stemOf(word);
  if (STEMS.size >= MAX_STEMS) STEMS.clear();
  STEMS.set(word, stemmed);
  return stemmed;
}

/**
 * Words already stemmed. A catalog's few thousand distinct words recur across its tools and in
 * every query, and the endings' regular expressions were a quarter of an index build's time.
 * Bounded: a flood of new words (hostile queries) empties it.
 */
const STEMS = new Map<string, string>();
const MAX_STEMS = 20_000;

function stemOf(word: string): string {
  if (word.length <= 3 || !/^\p{Ll}+$/u.test(word)) return word;
  let w = word;
  // -ment nouns meet their verb ("attachment" → "attach", "deployments" → "deploy") when a real verb is left (not "docu" of "document").
  if (/ments?$/.test(w) && w.replace(/ments?$/, '').length >= 6) return w.replace(/ments?$/, '');
  if (/ie[sd]$/.test(w) && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (/(?:x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('ation') && w.length > 7) w = w.slice(0, -5);
  else if (w.endsWith('ion') && w.length > 6) w = w.slice(0, -3);
  if (w.endsWith('e') && w.length > 3) w = w.slice(0, -1);
  if (w.length > 3 && w.at(-1) === w.at(-2) && !'lsz'.includes(w.at(-1)!)) w = w.slice(0, -1);
  return w;
}
