/** A `skill://` uri (scheme compared case-insensitively, as RFC 3986 says, after any leading spaces an upstream might trim): its reads belong to a skill. */
export function isSkillUri(uri: string): boolean {
  return /^\s*skill:/i.test(uri);
}

/** resources/read, resources/subscribe and resources/unsubscribe of a skill's file: answered by the skills extension, under the skill's rule (README: "Skills"). */
export function isSkillResourceRequest(method: string, params: Record<string, unknown>): boolean {
  return (
    (method === 'resources/read' || method === 'resources/subscribe' || method === 'resources/unsubscribe') &&
    typeof params.uri === 'string' &&
    isSkillUri(params.uri)
  );
}

/** The directory a skill's files live under: its uri up to and with the last `/` (`skill://pdf/SKILL.md` → `skill://pdf/`); null for a uri without a path. */
export function skillDirectory(skillUri: string): string | null {
  const slash = skillUri.lastIndexOf('/');
  return slash > 'skill://'.length ? skillUri.slice(0, slash + 1) : null;
}

/**
 * Whether a uri could name another place than it reads as: a dot segment (also percent-encoded)
 * or a backslash would let `skill://allowed/../denied/x` match an allowed skill's directory and
 * reach a denied one at an upstream that normalizes paths.
 */
export function escapesDirectory(uri: string): boolean {
  if (uri.includes('\\')) return true;
  return uri.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}
