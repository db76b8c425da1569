/**
 * Stands in for `@asteasolutions/zod-to-openapi` in the deployed HTTP workers (the `alias` of their configs).
 * `OpenAPIHono` imports the package's document generators (about 31 KB minified) next to what it uses on
 * every request, but the worker no longer generates the document: `/openapi.json` and `/docs` serve the one
 * written at build time (`npm run build:openapi`, a static asset). What runs at request time, the route
 * registry and the `.openapi()` metadata on zod schemas, is the package's own code, re-exported from its
 * module file (a path the alias does not match), so only the generators are left out of the bundle. Should
 * anything generate a document in the worker, it fails loudly instead of answering an empty one.
 */
export {
  extendZodWithOpenApi,
  getOpenApiMetadata,
  getRefId,
  OpenAPIRegistry,
  zodToOpenAPIRegistry,
} from "@asteasolutions/zod-to-openapi/dist/index.mjs";

class GeneratorNotInThisBuild {
  constructor() {
    throw new Error(
      "The OpenAPI document generator is not part of this build (lib/validation/zod-to-openapi-without-generator.ts): " +
        "the worker serves the document written by `npm run build:openapi`",
    );
  }
}

export class OpenApiGeneratorV3 extends GeneratorNotInThisBuild {}
export class OpenApiGeneratorV31 extends GeneratorNotInThisBuild {}
export class OpenApiGeneratorV32 extends GeneratorNotInThisBuild {}
