import { ValidationError } from './errors.js';

/** Longest tool-name glob accepted (admin-api schemas refuse longer ones at write time). */
export const MAX_GLOB_PATTERN_LENGTH = 200;
/** Longest tool name matched; MCP names are short, and the cap bounds matching to O(200·256). */
export const MAX_TOOL_NAME_LENGTH = 256;

/**
 * Tool-name glob: `*` matches any run of characters (including none), `?` exactly one.
 * Everything else is literal. Matching is case-sensitive and anchored.
 *
 * Greedy two-pointer matching with backtracking to the last `*` only: O(pattern·name) worst
 * case, no regular expressions, so a hostile pattern such as `*a*a*a*a*b` cannot stall the
 * process. Over-long inputs are a 400, never a slow match.
 */
export function matchGlob(pattern: string, name: string): boolean {
  if (pattern.length > MAX_GLOB_PATTERN_LENGTH) {
    throw new ValidationError(`Tool pattern longer than ${MAX_GLOB_PATTERN_LENGTH} characters`, { field: 'pattern' });
  }
  if (name.length > MAX_TOOL_NAME_LENGTH) {
    throw new ValidationError(`Tool name longer than ${MAX_TOOL_NAME_LENGTH} characters`, { field: 'toolName' });
  }
  if (pattern === '*') return true;
  let p = 0;
  let n = 0;
  let star = -1; // index of the last `*` seen in the pattern
  let resume = 0; // name index that `*` is currently stretched to
  while (n < name.length) {
    const pc = pattern[p];
    if (pc === '*') {
      star = p++;
      resume = n;
    } else if (pc !== undefined && (pc === '?' || pc === name[n])) {
      p++;
      n++;
    } else if (star >= 0) {
      // Let the last `*` swallow one more character and retry from just after it. Earlier
      // stars never need revisiting: the last one can absorb anything they could.
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** How specific a pattern is: literal characters count, wildcards don't. */
export function globSpecificity(pattern: string): number {
  let literals = 0;
  for (const ch of pattern) if (ch !== '*' && ch !== '?') literals++;
  return literals;
}
