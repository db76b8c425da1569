/** Minor units to a display amount with its currency code (never converted between currencies). */
export function formatMoney(cents: number, currency: string): string {
  const code = currency.toUpperCase();
  return `${(cents / 100).toFixed(2)} ${code}`;
}

/** An ISO time as `2026-11-23 16:00 UTC`: unambiguous, the same on every device. */
export function formatWhen(iso: string | null): string {
  if (!iso) return "never";
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export function formatRate(rate: number | null): string {
  return rate === null ? "-" : `${(rate * 100).toFixed(1)}%`;
}

/** Money per currency as one line, e.g. `120.00 USD, 30.00 EUR`, or `-` when there is none. */
export function moneyLine(money: Record<string, { net_revenue_cents: number }>): string {
  const parts = Object.entries(money).map(([currency, m]) => formatMoney(m.net_revenue_cents, currency));
  return parts.length > 0 ? parts.join(", ") : "-";
}

/** An evidence value as text: scalars as they are, anything else as compact JSON. */
export function evidenceText(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return String(value);
  return JSON.stringify(value);
}
