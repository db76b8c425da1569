import { parentPort, workerData } from "node:worker_threads";

/**
 * The load bench's client, in a thread of its own (`bench/load.ts` starts it): its requests, timers and the
 * garbage they make live on this thread's heap and event loop, not on the main thread's, which serves the
 * local SQL endpoint and the Redis proxy the two instances call. Sharing one loop, every pause of the client
 * (a collection of its garbage) also held the endpoints, and so every request in flight.
 *
 * Each message `{ count }` runs that many clicks at `inFlight`, alternating between the two instances, and
 * answers with each request's status and time (from send to the whole body read).
 */
export interface LoadClientSetup {
  baseUrls: [string, string];
  link: string;
  inFlight: number;
}

export interface Timed {
  status: number;
  ms: number;
}

const setup = workerData as LoadClientSetup;
const port = parentPort;
if (!port) throw new Error("bench/load-client.ts runs as a worker thread of bench/load.ts");

// A run-unique 10.x.y.z per request, so per-IP buckets of earlier runs (same Redis) never meet this run's.
const runTag = Math.floor(Math.random() * 200);
let counter = 0;
const freshIp = () => {
  counter++;
  return `10.${runTag}.${Math.floor(counter / 250) % 250}.${(counter % 250) + 1}`;
};
const body = JSON.stringify({ affiliate_url: `https://shop.example/?aff=${setup.link}` });

async function click(i: number): Promise<Timed> {
  const started = performance.now();
  const response = await fetch(`${setup.baseUrls[i % 2]}/api/v1/track/click`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "CF-Connecting-IP": freshIp() },
    body,
  });
  await response.text();
  return { status: response.status, ms: performance.now() - started };
}

async function run(count: number): Promise<Timed[]> {
  const results: Timed[] = new Array(count);
  let next = 0;
  const lanes = Array.from({ length: setup.inFlight }, async () => {
    while (next < count) {
      const i = next++;
      results[i] = await click(i);
    }
  });
  await Promise.all(lanes);
  return results;
}

port.on("message", (message: { count: number }) => {
  run(message.count).then(
    (results) => port.postMessage({ results }),
    (error: unknown) => port.postMessage({ error: String(error) }),
  );
});
