/**
 * The OpenAPI document's `info` and `servers`, in a module of their own: the docs page (console worker) reads
 * the title and description, and importing them from `openapi-document.ts` bundled that module's schemas and
 * the webhooks section (top-level `.openapi()` calls esbuild cannot drop) into the worker: 800 bytes gzipped.
 */
export const documentInfo = {
  openapi: "3.1.0",
  info: {
    title: "Affiliate Tracking Service API",
    version: "1.0.0",
    description:
      "Record clicks, leads, sales and refunds for a partner program. Paths carry the `/api/v1/` prefix.",
    license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
  },
  servers: [
    {
      url: "http://127.0.0.1:8787",
      description: "The local stack (`npm run dev`); in production, the origin the workers are deployed on",
    },
  ],
};
