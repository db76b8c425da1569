/**
 * Codes of the verification chain's own links (`synthetic-verify-p<program id>`, made on a program's first
 * test event). Codes are unique across the service, so a brand may not create one in this namespace: it
 * would break that program's chain, or have the fixture take over the brand's own link.
 */
export const SYNTHETIC_LINK_PREFIX = "synthetic-verify-";

export const syntheticLinkCode = (programId: number) => `${SYNTHETIC_LINK_PREFIX}p${programId}`;
