// The package's ES module file, imported by path by lib/validation/zod-to-openapi-without-generator.ts; the
// package ships its types for the package name only.
declare module "@asteasolutions/zod-to-openapi/dist/index.mjs" {
  export * from "@asteasolutions/zod-to-openapi";
}
