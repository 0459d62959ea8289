/** What anonymous dynamic client registration (RFC 7591) accepts at most: anyone may register, so every part is bounded. */
export const REGISTRATION_BOUNDS = {
  /** The whole request body, in UTF-8 bytes. */
  bodyBytes: 16 * 1024,
  /** `redirect_uris` entries (an app needs one or two; loopback ones match any port). */
  redirectUris: 10,
  /** Any one URI (redirect, client, logo, policy, terms…) and any other string field. */
  stringLength: 2000,
  /** Entries of any other list (grant types, contacts, post-logout redirect URIs…). */
  listLength: 10,
  /** `client_name`, which the consent screen shows. */
  nameLength: 100,
} as const;

/** An RFC 7591 section 3.2.2 error body. */
export type RegistrationRefusal = {
  error: 'invalid_redirect_uri' | 'invalid_client_metadata';
  error_description: string;
};

const refusal = (error: RegistrationRefusal['error'], error_description: string): RegistrationRefusal => ({
  error,
  error_description,
});

/** Control characters (C0, DEL, C1) and the bidirectional controls that could make a name read as another. */
const isUnshowable = (code: number) =>
  code < 0x20 ||
  (code >= 0x7f && code <= 0x9f) ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2066 && code <= 0x2069);

function redirectUrisRefusal(uris: unknown): RegistrationRefusal | null {
  if (!Array.isArray(uris)) return null;
  if (uris.length > REGISTRATION_BOUNDS.redirectUris)
    return refusal('invalid_redirect_uri', `at most ${REGISTRATION_BOUNDS.redirectUris} redirect_uris`);
  if (uris.some((uri) => typeof uri === 'string' && uri.length > REGISTRATION_BOUNDS.stringLength))
    return refusal(
      'invalid_redirect_uri',
      `a redirect URI is longer than ${REGISTRATION_BOUNDS.stringLength} characters`,
    );
  return null;
}

function fieldRefusal(name: string, value: unknown): RegistrationRefusal | null {
  if (typeof value === 'string' && value.length > REGISTRATION_BOUNDS.stringLength)
    return refusal('invalid_client_metadata', `${name} is longer than ${REGISTRATION_BOUNDS.stringLength} characters`);
  if (!Array.isArray(value)) return null;
  if (value.length > REGISTRATION_BOUNDS.listLength)
    return refusal('invalid_client_metadata', `${name} has more than ${REGISTRATION_BOUNDS.listLength} entries`);
  const long = value.some((item) => typeof item === 'string' && item.length > REGISTRATION_BOUNDS.stringLength);
  return long ? refusal('invalid_client_metadata', `an entry of ${name} is too long`) : null;
}

function nameRefusal(name: unknown): RegistrationRefusal | null {
  if (typeof name !== 'string') return null;
  if (name.length > REGISTRATION_BOUNDS.nameLength)
    return refusal(
      'invalid_client_metadata',
      `client_name is longer than ${REGISTRATION_BOUNDS.nameLength} characters`,
    );
  return [...name].some((char) => isUnshowable(char.codePointAt(0)!))
    ? refusal('invalid_client_metadata', 'client_name holds control or bidirectional override characters')
    : null;
}

/**
 * Why a registration request `body` is refused before oidc-provider stores anything, or null when
 * it is within the bounds (oidc-provider then checks its meaning: what is not a JSON object is its
 * to answer). Localized variants (`client_name#fr`) are bounded as the field they translate.
 */
export function registrationRefusal(body: string): RegistrationRefusal | null {
  if (Buffer.byteLength(body, 'utf8') > REGISTRATION_BOUNDS.bodyBytes)
    return refusal('invalid_client_metadata', `the registration is larger than ${REGISTRATION_BOUNDS.bodyBytes} bytes`);
  let metadata: unknown;
  try {
    metadata = JSON.parse(body);
  } catch {
    return null;
  }
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return null;
  for (const [key, value] of Object.entries(metadata)) {
    const field = key.split('#')[0]!;
    const refused =
      field === 'redirect_uris'
        ? redirectUrisRefusal(value)
        : field === 'client_name'
          ? nameRefusal(value)
          : fieldRefusal(key, value);
    if (refused) return refused;
  }
  return null;
}
