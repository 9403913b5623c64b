import {createHmac} from 'crypto';

/**
 * The hash of a sensitive column's value: HMAC-SHA-256 of its UTF-8 bytes, exactly as exported, keyed
 * by the config's hash_salt, as 64 lower-case hex digits. Keyed, so that nobody without the salt can
 * find a value by hashing a list of candidates (e-mail addresses); the same value under the same salt
 * hashes the same in every quest, layout and sync. The one place this rule lives.
 */
export function keyedHash(salt: string, value: string): string {
  return createHmac('sha256', salt).update(value, 'utf8').digest('hex');
}

/**
 * What a stream's state records of the hash_salt its records were hashed with, so that a later sync
 * tells a changed salt: the keyed hash of a fixed text, 16 characters. It says no more of the salt
 * than any hashed cell does (a keyed hash of a known text).
 */
export function saltCheck(salt: string): string {
  return createHmac('sha256', salt).update('questback hash_salt check', 'utf8').digest('base64url').slice(0, 16);
}

/**
 * The secret the state's resume fingerprints are keyed with (sync/windows/resume): a keyed hash of a
 * fixed text under the hash_salt, or under the client secret when there is no salt. Never written
 * anywhere; the same in every sync while that secret stays, so a later sync can match what an
 * earlier one listed. The salt first: it is kept stable (every hash depends on it), while a client
 * secret may be rotated at any time (resume then falls back to matching by Response ID, see resume/).
 */
export function resumeSecret(salt: string | undefined, clientSecret: string): Buffer {
  return createHmac('sha256', salt || clientSecret)
    .update('questback resume fingerprints', 'utf8')
    .digest();
}
