/** The longest URI template or URI matched: routing never runs a regex over unbounded input. */
const MAX_MATCHED_LENGTH = 2_048;

/** Compiled templates (a provider lists a handful; the bound only keeps a hostile list from growing it). */
const compiled = new Map<string, RegExp | null>();
const MAX_COMPILED = 1_000;

/**
 * Whether `uri` is an expansion of the RFC 6570 `template` (levels 1–4 as resource templates use
 * them: `{var}`, `{+var}`, `{#var}`, `{/var}`, `{.var}`, `{;var}`, `{?var}`, `{&var}`). Literal
 * parts must match exactly; a simple `{var}` takes no `/`, `?` or `#`, reserved forms take any.
 */
export function matchesTemplate(template: string, uri: string): boolean {
  if (template.length > MAX_MATCHED_LENGTH || uri.length > MAX_MATCHED_LENGTH) return false;
  let pattern = compiled.get(template);
  if (pattern === undefined) {
    pattern = compile(template);
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(template, pattern);
  }
  return pattern !== null && pattern.test(uri);
}

const escape = (literal: string): string => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The operator's expansion as a regex fragment (what one expression may expand to). */
const EXPRESSION: Record<string, string> = {
  '': '[^/?#]*',
  '+': '.*',
  '#': '(?:#.*)?',
  '/': '(?:/[^/?#]*)*',
  '.': '(?:\\.[^/?#.]*)*',
  ';': '(?:;[^/?#;]*)*',
  '?': '(?:\\?[^#]*)?',
  '&': '(?:&[^#&]*)*',
};

/** More expressions than this make a template unroutable (each one widens the match's backtracking). */
const MAX_EXPRESSIONS = 8;

/** The template as an anchored regex; null for a malformed one (never matched). Adjacent equal expressions collapse into one. */
function compile(template: string): RegExp | null {
  let source = '^';
  let at = 0;
  let last: string | null = null;
  let count = 0;
  for (const match of template.matchAll(/\{([+#./;?&]?)([^{}]*)\}/g)) {
    const literal = template.slice(at, match.index);
    const fragment = EXPRESSION[match[1]!];
    if (fragment === undefined || match[2]!.trim() === '' || ++count > MAX_EXPRESSIONS) return null;
    source += escape(literal);
    if (literal !== '' || fragment !== last) source += fragment;
    last = fragment;
    at = match.index + match[0].length;
  }
  const rest = template.slice(at);
  if (rest.includes('{') || rest.includes('}')) return null;
  return new RegExp(`${source}${escape(rest)}$`, 's');
}
