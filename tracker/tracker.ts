/**
 * The browser tracker: a dependency-free script a brand adds to its pages.
 *
 *   <script async src="https://{tracker_url}/tracker.js" data-program-id="1"></script>
 *
 * - On a page whose URL carries `aff` (or `via`) it records the click and keeps the returned click id in the
 *   first-party cookie `service_click_id`, on the registrable domain, for the program's window. A visitor who
 *   already has the cookie sends it, and the service answers with that first id (first click): the cookie
 *   is then left as it is, expiry included. A reload or back-navigation to a landing URL already recorded
 *   in this tab (`sessionStorage`) while the cookie still holds that click's id is not recorded again.
 * - On other pages (and such repeats) of a visitor with a click id it records one page view
 *   (`/api/v1/track/visit`), unless the script tag says `data-visits="off"`.
 * - It writes the click id as `client_reference_id` into the payments provider's payment links, buy buttons
 *   and pricing tables, including ones added later (only the added or changed elements are looked at).
 * - Every request gives up after `data-timeout-ms` (default 8 s) and then counts as a network error.
 * - `lead()` and `config()` keep an answer for the page view, except one that may pass (network error, 429, 5xx):
 *   asked again, they send again.
 * - A landing URL longer than 2,048 characters is recorded as its origin and path with only the referral and
 *   `utm_*` parameters (when even that is too long, as `<origin>/?aff=<code>`).
 * - `window.serviceTracker` exposes `ready`, `getClickId()`, `lead()` and `config()`.
 *
 * Nothing here may break the page: every failure (network, ad blocker, unknown program, cookies disabled)
 * is caught, and the public functions resolve with an error body instead of rejecting. Built by
 * `npm run build:tracker` (esbuild, minified IIFE) into `functions/api/generated/tracker-bundle.ts`.
 */

type Body = Record<string, unknown>;

interface LeadInput {
  customer_key?: string | number | null;
  email?: string | null;
}

interface ServiceTracker {
  /** Settles once the click (if any) was answered or timed out: the visitor's click id, or null. Never rejects. */
  ready: Promise<string | null>;
  getClickId(): string | null;
  /** A browser-mode lead with the cookie's click id; resolves with the response body, never rejects. */
  lead(input?: LeadInput): Promise<Body>;
  /** The program's public tracker settings (`/api/v1/track/config`); never rejects. */
  config(): Promise<Body>;
}

declare global {
  interface Window {
    serviceTracker?: ServiceTracker;
  }
}

const COOKIE = "service_click_id";
const ID_PATTERN = /^[\w-]{1,128}$/;
const PAYMENT_LINKS = 'a[href^="https://buy.stripe.com/"]';
const PAYMENT_ELEMENTS = "stripe-buy-button,stripe-pricing-table";
const REFERENCE_ATTRIBUTE = "client-reference-id";
const REFERENCE_PARAM = "client_reference_id";
/** `sessionStorage` key prefix: `<prefix><landing URL>` = the click id recorded for that URL in this tab. */
const RECORDED = "service_click:";
const DEFAULT_TIMEOUT_MS = 8000;
/** The longest URL the click and visit endpoints take. */
const MAX_URL = 2048;

const failure = (code: string, message: string): Body => ({ success: false, error: { code, message } });

/**
 * An answer worth asking again for later in the page view: unreachable, unreadable, rate limited (429) or a
 * server failure (5xx). Any other answer (done, or refused for what was sent) would come back the same.
 */
function mayPass(answer: Body): boolean {
  const error = answer.error as Body | undefined;
  if (!error) return false;
  const status = Number(error.status);
  return (
    error.code === "network_error" || error.code === "invalid_response" || status === 429 || status >= 500
  );
}

/**
 * The landing URL the click records: the page's own, or, when longer than the endpoint takes (long ad
 * parameters), its origin and path with only the referral and `utm_*` parameters, which the reports read.
 */
function landingUrlOf(loc: Location, code: string): string {
  if (loc.href.length <= MAX_URL) return loc.href;
  const kept = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(loc.search)) {
    if (name === "aff" || name === "via" || name.startsWith("utm_")) kept.append(name, value);
  }
  const short = `${loc.origin}${loc.pathname}?${kept}`;
  return short.length <= MAX_URL ? short : `${loc.origin}/?aff=${encodeURIComponent(code)}`;
}

function start(): void {
  const w = window;
  // A second copy of the script on the same page does nothing: one page view, one click.
  if (w.serviceTracker) return;
  const doc = document;
  const loc = location;
  const script =
    (doc.currentScript as HTMLScriptElement | null) ||
    doc.querySelector<HTMLScriptElement>('script[src*="tracker"][data-program-id]');
  const attribute = (name: string) => (script?.getAttribute(name) || "").trim();
  const programId = Number(attribute("data-program-id")) || undefined;
  const apiBase = apiBaseOf(attribute("data-api-host"), script?.src || loc.href);
  const timeoutAttribute = Number(attribute("data-timeout-ms"));
  const timeoutMs = timeoutAttribute > 0 ? timeoutAttribute : DEFAULT_TIMEOUT_MS;

  /**
   * One API call; resolves with the answer's body or a tracker error, never rejects. A request (or its body)
   * still pending after `timeoutMs` settles as a network error and is aborted: a stalled connection must not
   * leave `ready` or `lead()` pending for the page's life.
   */
  const request = (method: string, path: string, body?: Body): Promise<Body> => {
    const offline = failure("network_error", "The tracking service could not be reached");
    let timer: ReturnType<typeof setTimeout> | undefined;
    return new Promise<Body>((resolve) => {
      const controller = new AbortController();
      timer = setTimeout(() => {
        resolve(offline);
        controller.abort();
      }, timeoutMs);
      fetch(apiBase + path, {
        method,
        credentials: "omit",
        keepalive: true,
        signal: controller.signal,
        ...(body ? { headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) } : {}),
      })
        .then(
          (response) =>
            response
              .json()
              .catch(() =>
                failure("invalid_response", `The tracking service answered HTTP ${response.status}`),
              ),
          () => offline,
        )
        .then(resolve);
    })
      .catch(() => offline)
      .finally(() => clearTimeout(timer));
  };

  let clickId = readCookie();
  const search = new URLSearchParams(loc.search);
  const code = (search.get("aff") || "").trim() || (search.get("via") || "").trim();
  const referrer = doc.referrer.slice(0, MAX_URL) || undefined;
  const recordedKey = RECORDED + loc.href;
  // A reload or back-navigation of a landing URL this tab already recorded, with that click's id still in
  // the cookie: nothing new to record (it is a page view like any other).
  const clicking = !!code && !(clickId && storage(() => sessionStorage.getItem(recordedKey)) === clickId);

  const ready: Promise<string | null> = clicking
    ? request("POST", "/api/v1/track/click", {
        affiliate_url: landingUrlOf(loc, code),
        program_id: programId,
        click_id: clickId || undefined,
        referrer,
      })
        .then((response) => {
          const id = response.click_id;
          if (response.success === true && typeof id === "string" && ID_PATTERN.test(id)) {
            if (id !== clickId) {
              // A new visitor, or one whose earlier click no longer counts. The first id stays untouched.
              clickId = id;
              writeCookie(id, Number(response.cookie_window_days) || 60);
            }
            storage(() => sessionStorage.setItem(recordedKey, id));
          }
          return clickId;
        })
        .catch(() => clickId)
    : Promise.resolve(clickId);

  if (!clicking && clickId && attribute("data-visits") !== "off") {
    request("POST", "/api/v1/track/visit", {
      click_id: clickId,
      url: loc.href.slice(0, MAX_URL),
      referrer,
      program_id: programId,
    });
  }

  ready.then((id) => {
    if (!id) return;
    writeReference(doc, id);
    // Only what changed: added subtrees, and elements whose `href` or reference attribute changed.
    new MutationObserver((records) => {
      for (const record of records) {
        if (record.type === "attributes") writeReference(record.target as Element, id);
        for (const node of record.addedNodes) {
          if (node.nodeType === Node.ELEMENT_NODE) writeReference(node as Element, id);
        }
      }
    }).observe(doc.documentElement, {
      childList: true,
      subtree: true,
      attributes: true,
      attributeFilter: ["href", REFERENCE_ATTRIBUTE],
    });
  });

  const leads: Record<string, Promise<Body>> = {};
  let config: Promise<Body> | undefined;

  w.serviceTracker = {
    ready,
    getClickId: () => clickId,
    lead: (input) =>
      ready
        .then((id) => {
          if (!id)
            return failure("no_click_id", "No click id: the visitor did not arrive through a partner link");
          const key = input?.customer_key;
          const body = {
            click_id: id,
            customer_key: key === null || key === undefined ? undefined : String(key),
            email: input?.email || undefined,
            program_id: programId,
          };
          // The same lead twice in one page view is sent once; one that may pass (network, 429, 5xx) is sent
          // again when asked again.
          const dedupe = JSON.stringify(body);
          leads[dedupe] ||= request("POST", "/api/v1/track/lead", body).then((answer) => {
            if (mayPass(answer)) delete leads[dedupe];
            return answer;
          });
          return leads[dedupe];
        })
        .catch(() => failure("tracker_error", "The lead could not be sent")),
    config: () => {
      config ||= programId
        ? request("GET", `/api/v1/track/config?program_id=${programId}`).then((answer) => {
            if (mayPass(answer)) config = undefined;
            return answer;
          })
        : Promise.resolve(failure("no_program_id", "The script tag has no data-program-id"));
      return config;
    },
  };
}

/** `data-api-host` (an origin, or a base URL when the API is proxied under a path), else the script's origin. */
function apiBaseOf(host: string, scriptUrl: string): string {
  if (host) return (/^https?:\/\//i.test(host) ? host : `https://${host}`).replace(/\/+$/, "");
  try {
    return new URL(scriptUrl).origin;
  } catch {
    return location.origin;
  }
}

/** Every cookie write goes through here: the Cookie Store API is async and missing from some browsers. */
function setCookie(value: string): void {
  // biome-ignore lint/suspicious/noDocumentCookie: synchronous and available everywhere, unlike cookieStore
  document.cookie = value;
}

function readCookie(): string | null {
  try {
    const match = document.cookie.match(/(?:^|;\s*)service_click_id=([^;]*)/);
    const value = match?.[1] ?? "";
    return ID_PATTERN.test(value) ? value : null;
  } catch {
    // Sandboxed frames throw on `document.cookie`.
    return null;
  }
}

function writeCookie(id: string, days: number): void {
  try {
    const cookie = `${COOKIE}=${id}; path=/; max-age=${Math.round(days * 86400)}; samesite=lax${
      location.protocol === "https:" ? "; secure" : ""
    }`;
    const domain = registrableDomain();
    setCookie(domain ? `${cookie}; domain=${domain}` : cookie);
    if (domain && readCookie() !== id) setCookie(cookie);
  } catch {
    // Cookies disabled: the id still serves this page view (lead, payment links).
  }
}

/**
 * The shortest parent domain the browser accepts a cookie for (`shop.brand.co.uk` -> `brand.co.uk`), found by
 * writing a probe cookie from the shortest suffix upward: browsers refuse public suffixes, so no list is needed.
 * IP addresses and single-label hosts (localhost) get a host-only cookie.
 */
function registrableDomain(): string | undefined {
  const host = location.hostname;
  const labels = host.split(".");
  if (labels.length < 2 || host.includes(":") || /^[\d.]+$/.test(host)) return undefined;
  for (let size = 2; size <= labels.length; size++) {
    const probe = `service_probe=1; path=/; samesite=lax; domain=${labels.slice(-size).join(".")}`;
    setCookie(`${probe}; max-age=10`);
    if (/(?:^|;\s*)service_probe=1/.test(document.cookie)) {
      setCookie(`${probe}; max-age=0`);
      return labels.slice(-size).join(".");
    }
  }
  return undefined;
}

/** `sessionStorage` may be missing or throw (blocked storage, sandboxed frames): then nothing is remembered. */
function storage<T>(use: () => T): T | null {
  try {
    return use();
  } catch {
    return null;
  }
}

/**
 * Within `root` (itself included): payment links get `?client_reference_id=<click id>`; buy buttons and
 * pricing tables the `client-reference-id` attribute. A value the brand set itself (not a click id) is left
 * alone.
 */
function writeReference(root: Document | Element, id: string): void {
  const ours = (value: string | null) => !value || value === id || value.startsWith("clk_");
  const elements = [root, ...root.querySelectorAll(`${PAYMENT_LINKS},${PAYMENT_ELEMENTS}`)] as Element[];
  for (const element of elements) {
    if (element.matches?.(PAYMENT_LINKS)) {
      try {
        const link = element as HTMLAnchorElement;
        const url = new URL(link.href);
        const current = url.searchParams.get(REFERENCE_PARAM);
        if (current === id || !ours(current)) continue;
        url.searchParams.set(REFERENCE_PARAM, id);
        link.href = url.href;
      } catch {
        // A malformed href stays as it is.
      }
    } else if (element.matches?.(PAYMENT_ELEMENTS)) {
      const current = element.getAttribute(REFERENCE_ATTRIBUTE);
      if (current !== id && ours(current)) element.setAttribute(REFERENCE_ATTRIBUTE, id);
    }
  }
}

try {
  start();
} catch {
  // Never into the page.
}

export {};
