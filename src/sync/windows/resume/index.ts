// Resume by identity (identity-resume.ts) and the store of the identities a window emitted
// (emitted-keys.ts). The store's entries (key-forms.ts), how they are spilled (spilled-keys.ts) and
// loaded after a setback (key-table.ts) are its own: nothing outside this folder sees them.
export {IdentityResume} from './identity-resume';
export {FingerprintKey} from './fingerprint-key';
export {EmittedKeys} from './emitted-keys';
