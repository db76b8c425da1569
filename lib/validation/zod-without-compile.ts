/**
 * Stands in for zod's schema compiler (`zod/v4/core/compile.js`) in the deployed workers (the `alias` in
 * every wrangler config). zod's namespace keeps the compiler (about 30 KB minified) in every bundle, but the
 * service never calls `z.compile` or `z.withParser`: schemas parse on zod's runtime parser, whose behaviour
 * and messages this leaves unchanged. Should anything compile a schema, it gets the schema back untouched,
 * which is what zod itself does for a schema it cannot compile.
 */

/** The same registered symbol as zod's, so zod's parser recognises it. */
export const INVALID: unique symbol = Symbol.for("zod.compile.invalid") as never;

export class ZodCompileAsyncError extends Error {
  constructor(message = "z.compile does not support async refinements, transforms, or checks") {
    super(message);
    this.name = "ZodCompileAsyncError";
  }
}

export class ZodCompileUnsupportedError extends Error {
  constructor(feature = "compiling in this build") {
    super(`z.compile does not support ${feature}; this schema must use the runtime parser`);
    this.name = "ZodCompileUnsupportedError";
  }
}

export function compile<T>(schema: T): T {
  return schema;
}

export function withParser<T>(schema: T): T {
  return schema;
}

export function compileFn(): never {
  throw new ZodCompileUnsupportedError();
}
