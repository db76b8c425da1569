/**
 * The JWS algorithms an ID token may be signed with (RFC 7518 section 3, RFC 8037), as WebCrypto names them:
 * the JWK a key must be to verify each, and the parameters for `importKey` and `verify`. The same set `jose`
 * verified with a key set; HMAC is not in it (a key set holds public keys only).
 */
export interface JwsAlgorithm {
  kty: "RSA" | "EC" | "OKP";
  /** The curve an EC or OKP key must be on. */
  crv?: string;
  importAs: SubtleCryptoImportKeyAlgorithm;
  verifyAs: SubtleCryptoSignAlgorithm;
}

function rsa(name: "RSASSA-PKCS1-v1_5" | "RSA-PSS", bits: number): JwsAlgorithm {
  const hash = `SHA-${bits}`;
  // RFC 7518 3.5: the PSS salt is as long as the hash.
  const verifyAs = name === "RSA-PSS" ? { name, saltLength: bits / 8 } : { name };
  return { kty: "RSA", importAs: { name, hash }, verifyAs };
}

function ecdsa(crv: string, bits: number): JwsAlgorithm {
  // JWS carries ECDSA signatures as r || s, the form WebCrypto verifies (no DER).
  return {
    kty: "EC",
    crv,
    importAs: { name: "ECDSA", namedCurve: crv },
    verifyAs: { name: "ECDSA", hash: `SHA-${bits}` },
  };
}

const ed25519: JwsAlgorithm = {
  kty: "OKP",
  crv: "Ed25519",
  importAs: { name: "Ed25519" },
  verifyAs: { name: "Ed25519" },
};

const algorithms: Record<string, JwsAlgorithm> = {
  RS256: rsa("RSASSA-PKCS1-v1_5", 256),
  RS384: rsa("RSASSA-PKCS1-v1_5", 384),
  RS512: rsa("RSASSA-PKCS1-v1_5", 512),
  PS256: rsa("RSA-PSS", 256),
  PS384: rsa("RSA-PSS", 384),
  PS512: rsa("RSA-PSS", 512),
  ES256: ecdsa("P-256", 256),
  ES384: ecdsa("P-384", 384),
  ES512: ecdsa("P-521", 512),
  // "EdDSA" (RFC 8037) and its fully specified name "Ed25519" (RFC 9864); Ed448 is not in WebCrypto everywhere.
  EdDSA: ed25519,
  Ed25519: ed25519,
};

/** The algorithm named by a token's `alg`, or undefined: `none`, HMAC and anything unknown are refused. */
export function jwsAlgorithm(alg: string): JwsAlgorithm | undefined {
  return Object.hasOwn(algorithms, alg) ? algorithms[alg] : undefined;
}

/** RSA keys shorter than this are refused, as `jose` refused them (RFC 7518 3.3). */
export const MIN_RSA_BITS = 2048;
