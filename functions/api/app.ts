import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../lib/http/app-env.ts";
import { createBaseApp } from "./base-app.ts";
import { consoleRoutes } from "./console-routes.ts";
import { managementRoutes } from "./management-routes.ts";
import { trackingRoutes } from "./tracking-routes.ts";

/**
 * Every route of the three HTTP workers in one app, in the order the OpenAPI document lists them: what the
 * document is generated from (`npm run build:openapi`). No worker deploys it: the tracking worker serves
 * `trackingRoutes`, the API worker `managementRoutes`, the console worker `consoleRoutes`.
 */
export function createApp(): OpenAPIHono<AppEnv> {
  return createBaseApp([...trackingRoutes, ...managementRoutes, ...consoleRoutes]);
}
