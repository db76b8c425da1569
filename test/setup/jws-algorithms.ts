/**
 * Every signing algorithm the ID-token check accepts (lib/identity/jws-algorithms.ts), listed here, not read
 * from it, so a test fails when one is dropped; the Node test and the workerd test run them all.
 */
export const ID_TOKEN_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;
export type IdTokenAlgorithm = (typeof ID_TOKEN_ALGORITHMS)[number];
