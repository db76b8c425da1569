/** Debian's Chromium (never a downloaded browser), as every browser test launches it through playwright-core. */
export const CHROMIUM = "/usr/bin/chromium";

/** Headless, sandbox-free for a container, and quiet: nothing reaches the network but the local stack. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
