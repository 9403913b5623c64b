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

/**
 * The shortest run of a secret's characters that counts as part of it: a text is cut (to a message's
 * length, a table cell) wherever its author chose, often before the scrubber sees the whole, so a
 * secret's piece left at a cut must go as well as the whole.
 */
const SECRET_RUN = 8;
const HASH_BASE = 0x01000193;
/** Bits of the filter that rules most positions of a text out before a run is compared (2^22 bits, 512 KiB). */
const FILTER_SHIFT = 10;

/** The runs of one length: a filter of their rolling hashes, to rule positions out without a string each, and the runs themselves. */
interface Runs {
  length: number;
  /** HASH_BASE to the power length - 1, to take the first character out of a rolling hash. */
  top: number;
  filter: Uint32Array;
  texts: Set<string>;
}

function rollingHash(text: string, from: number, length: number): number {
  let h = 0;
  for (let i = from; i < from + length; i++) h = (Math.imul(h, HASH_BASE) + text.charCodeAt(i)) | 0;
  return h;
}

/** Marks in `covered` (made when first needed) where `text` holds one of `runs`. */
function markRuns(text: string, runs: Runs, covered: Uint8Array | undefined): Uint8Array | undefined {
  const {length, top, filter, texts} = runs;
  if (text.length < length) return covered;
  let h = rollingHash(text, 0, length);
  for (let i = 0; ; i++) {
    const bit = h >>> FILTER_SHIFT;
    if (filter[bit >>> 5] & (1 << (bit & 31)) && texts.has(text.slice(i, i + length))) {
      covered ??= new Uint8Array(text.length);
      covered.fill(1, i, i + length);
    }
    if (i + length >= text.length) return covered;
    h = (Math.imul((h - Math.imul(text.charCodeAt(i), top)) | 0, HASH_BASE) + text.charCodeAt(i + length)) | 0;
  }
}

/**
 * Replaces every known secret (the client secret, the salt, issued tokens), in every form, in a text
 * before it leaves the process, and every piece of SECRET_RUN characters or more of one: whatever cut
 * the text on its way here, no run of a secret's characters that long survives. A form shorter than
 * that (a secret of six or seven characters) is replaced when whole.
 */
export class SecretScrubber {
  private readonly runs = new Map<number, Runs>();

  add(secret: string | undefined, clientId?: string): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH) return;
    for (const form of secretForms(secret, clientId)) {
      const length = Math.min(SECRET_RUN, form.length);
      let runs = this.runs.get(length);
      if (!runs) {
        let top = 1;
        for (let i = 1; i < length; i++) top = Math.imul(top, HASH_BASE);
        runs = {length, top, filter: new Uint32Array(2 ** (32 - FILTER_SHIFT - 5)), texts: new Set()};
        this.runs.set(length, runs);
      }
      for (let i = 0; i + length <= form.length; i++) {
        const run = form.slice(i, i + length);
        if (runs.texts.has(run)) continue;
        runs.texts.add(run);
        const bit = rollingHash(run, 0, length) >>> FILTER_SHIFT;
        runs.filter[bit >>> 5] |= 1 << (bit & 31);
      }
    }
  }

  /** It has a secret to mask (a config has been read): until then, a text may hold one it cannot know. */
  get holdsSecrets(): boolean {
    return this.runs.size > 0;
  }

  scrub(text: string): string {
    let covered: Uint8Array | undefined;
    for (const runs of this.runs.values()) covered = markRuns(text, runs, covered);
    if (!covered) return text;
    let out = '';
    for (let i = 0; i < text.length;) {
      if (!covered[i]) {
        const end = covered.indexOf(1, i);
        out += text.slice(i, end === -1 ? text.length : end);
        i = end === -1 ? text.length : end;
      } else {
        const end = covered.indexOf(0, i);
        out += MASK;
        i = end === -1 ? text.length : end;
      }
    }
    return out;
  }
}
