#!/usr/bin/env node
// The `affiliate-tracking-service` command: runs the TypeScript tool through tsx (a dependency of this repo).
import { register } from "tsx/esm/api";

register();
await import("./main.ts");
