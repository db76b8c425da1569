import { SELF } from "cloudflare:test";
import { freshIp } from "./harness.ts";

export const readinessPath = "/api/v1/programs/me/readiness";

export async function getJson(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await SELF.fetch(`https://api.test${path}`, {
    headers: { "CF-Connecting-IP": freshIp(), ...headers },
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}

export interface CheckView {
  id: string;
  status: string;
  required: boolean;
  stage: string;
  evidence: Record<string, unknown>;
}

/** The verdict of a key as `{verdict, statuses by check id}`, plus the raw body. */
export async function readinessOf(key: string) {
  const response = await getJson(readinessPath, { Authorization: `Bearer ${key}` });
  if (response.status !== 200)
    throw new Error(`readiness ${response.status}: ${JSON.stringify(response.body)}`);
  const checks = response.body.checks as CheckView[];
  return {
    body: response.body,
    verdict: response.body.verdict as string,
    status: Object.fromEntries(checks.map((c) => [c.id, c.status])) as Record<string, string>,
    check: (id: string) => checks.find((c) => c.id === id) as CheckView,
  };
}
