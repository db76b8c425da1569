/**
 * Stands in for jose's JWE decryption (`jose/jwe/compact/decrypt`) in the deployed API worker (the `alias` in
 * wrangler.toml). `openid-client` imports it for encrypted responses, which only
 * `enableDecryptingResponses` turns on; the sign-in never does (the provider signs its ID tokens, it does not
 * encrypt them), yet the import keeps jose's key management and ciphers (about 13 KB minified) in the bundle.
 * Should a response ever need decrypting, it fails as a decryption failure would.
 */
export async function compactDecrypt(): Promise<never> {
  throw new Error("JWE decryption is not part of this build (lib/identity/jose-without-jwe.ts)");
}
