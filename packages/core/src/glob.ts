const cache = new Map<string, RegExp>();

/**
 * Tool-name glob: `*` matches any run of characters (including none), `?` exactly one.
 * Everything else is literal. Matching is case-sensitive and anchored.
 */
export function globToRegExp(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (re) return re;
  let src = '';
  for (const ch of pattern) {
    if (ch === '*') src += '.*';
    else if (ch === '?') src += '.';
    else src += ch.replace(/[.+^${}()|[\]\\/-]/g, '\\$&');
  }
  re = new RegExp(`^${src}$`, 's');
  if (cache.size > 10_000) cache.clear();
  cache.set(pattern, re);
  return re;
}

export function matchGlob(pattern: string, name: string): boolean {
  return pattern === '*' || globToRegExp(pattern).test(name);
}

/** How specific a pattern is: literal characters count, wildcards don't. */
export function globSpecificity(pattern: string): number {
  return pattern.replace(/[*?]/g, '').length;
}
