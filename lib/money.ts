/** Currencies the service accepts, with their minor-unit exponent (amounts are integers in minor units). */
export const currencyExponents = { USD: 2, EUR: 2, VND: 0 } as const;
export type Currency = keyof typeof currencyExponents;
export const supportedCurrencies = Object.keys(currencyExponents) as Currency[];

export function isSupportedCurrency(value: string): value is Currency {
  return Object.hasOwn(currencyExponents, value);
}

/**
 * A decimal string ("12.5", "20.0000") as an exact integer count of 1/10000ths, so money math never goes
 * through binary floating point.
 */
export function toTenThousandths(decimal: string): bigint {
  const match = /^(\d+)(?:\.(\d{1,4})\d*)?$/.exec(decimal.trim());
  if (!match) throw new Error(`not a non-negative decimal: ${decimal}`);
  return BigInt(match[1]!) * 10000n + BigInt((match[2] ?? "").padEnd(4, "0"));
}

/** numerator / denominator rounded half up, for non-negative integers. */
export function divideRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator * 2n + denominator) / (denominator * 2n);
}
