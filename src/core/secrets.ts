/**
 * Secrets in output: every form a secret takes, and the scrubber that masks them. Core, so that
 * config validation can mask a secret pasted into another setting before any logger knows it.
 */

const MASK = '**********';
/** Very short values would redact ordinary words; real secrets and tokens are long. */
const MIN_SECRET_LENGTH = 6;

/** Percent-encodings with upper- and lower-case hex digits alike. */
function withHexCases(encoded: string): string[] {
  return [encoded, encoded.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())];
}

/** The secret as a URL's user info, path or query serializes it (pasted into api_url, say). */
function urlForms(secret: string): string[] {
  const url = new URL('http://host/');
  url.password = secret;
  const forms = [url.password];
  url.pathname = `/${secret}`;
  forms.push(url.pathname.slice(1));
  url.search = `?${secret}`;
  forms.push(url.search.slice(1));
  // A host name is lower-cased.
  return [...forms.flatMap(withHexCases), secret.toLowerCase()];
}

/**
 * Every form in which a secret may travel and come back in an echo: as it is, JSON-escaped,
 * URL-encoded (path or query style, the form style with `+` for spaces, as in the token request, and
 * as a URL's parts serialize it),
 * and base64 (standard and URL-safe; with the client id, as HTTP Basic credentials carry it).
 */
export function secretForms(secret: string, clientId?: string): string[] {
  const base64 = (text: string): string[] => {
    const b = Buffer.from(text, 'utf8').toString('base64');
    return [b, b.replace(/=+$/, ''), Buffer.from(text, 'utf8').toString('base64url')];
  };
  const forms = [
    secret,
    JSON.stringify(secret).slice(1, -1),
    ...withHexCases(encodeURIComponent(secret)),
    ...withHexCases(new URLSearchParams({s: secret}).toString().slice(2)),
    ...base64(secret),
    ...(clientId ? base64(`${clientId}:${secret}`) : []),
    ...urlForms(secret),
  ];
  // The JSON-escaped form of each, as a line of output is JSON.
  const all = forms.flatMap((f) => [f, JSON.stringify(f).slice(1, -1)]);
  return [...new Set(all)].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/** Replaces every known secret (the client secret, issued tokens), in every form, in a line before it leaves the process. */
export class SecretScrubber {
  private forms: string[] = [];

  add(secret: string | undefined, clientId?: string): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH) return;
    const known = new Set(this.forms);
    for (const form of secretForms(secret, clientId)) if (!known.has(form)) this.forms.push(form);
    // Longest first, so that a form containing another is replaced whole.
    this.forms.sort((a, b) => b.length - a.length);
  }

  scrub(line: string): string {
    let out = line;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(MASK);
    return out;
  }
}
