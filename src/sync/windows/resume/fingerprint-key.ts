import {createHmac} from 'crypto';

/**
 * What the resume identities a STATE lists are keyed with, so that nothing in a state lets anyone
 * confirm a dropped or hashed cell by hashing candidates: a row's fingerprint (rowPrint, over the
 * row's bytes, dropped and hashed cells included) goes into a STATE only as a keyed hash of it, a
 * whole row only as a keyed hash of its key, and the digest of the file they were taken from is
 * keyed too. The secret (core/keyed-hash.ts resumeSecret) comes from the config and never lands in
 * a state or an output; a state written under another secret (or before there was one) has another
 * file digest, so its fingerprints count for nothing and its ids alone are matched (identity-resume.ts).
 * HMAC-SHA-256 each time: only rows a failure lists or an earlier list names pay for it, never every row.
 */
export class FingerprintKey {
  private readonly printBytes = Buffer.alloc(8);

  constructor(private readonly secret: Uint8Array) {}

  /** The digest of the export settings and the header a window's fingerprints depend on: 11 base64url characters. */
  file(settings: string, header: readonly string[]): string {
    return this.mac('f')
      .update(JSON.stringify([settings, header]), 'utf8')
      .digest('base64url')
      .slice(0, 11);
  }

  /** A row's fingerprint (print[0], print[1]) as a STATE lists it: 11 base64url characters (64 bits and 2). */
  print(lo: number, hi: number): string {
    this.printBytes.writeUInt32LE(lo, 0);
    this.printBytes.writeUInt32LE(hi, 4);
    return this.mac('p').update(this.printBytes).digest('base64url').slice(0, 11);
  }

  /** A whole row's key b[s, e) as a STATE lists it: 22 base64url characters (128 bits and 4). */
  wholeRow(b: Uint8Array, s: number, e: number): string {
    return this.mac('w').update(b.subarray(s, e)).digest('base64url').slice(0, 22);
  }

  /** An HMAC under the secret, its input begun with a letter that keeps the three uses apart. */
  private mac(use: string) {
    return createHmac('sha256', this.secret).update(use, 'utf8');
  }
}
