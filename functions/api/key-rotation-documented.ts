/**
 * Spread into the OpenAPI configuration of a route that runs `keyRotationNotice` (spec section 5, "Key
 * rotation"): `describeKeyRotationNotice` (openapi-key-rotation.ts) finds the mark when the document is built
 * and writes the notice into the route's responses. A module of its own, so the workers bundle only the mark.
 */
export const ROTATION_MARKER = "x-key-rotation-notice";

export const keyRotationNoticeDocumented = { [ROTATION_MARKER]: true } as const;
