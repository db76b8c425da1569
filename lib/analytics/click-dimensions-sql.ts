/**
 * For writers of click rows outside the worker (the ten-million-event generator, test fixtures): the click's
 * analytics dimension columns, and their values derived by the database's `analytics_url_*` functions from
 * the `affiliate_url` and `referrer` of the row `alias`, in the same order. The worker derives the same
 * values itself (`click-dimensions.ts`).
 */
export const CLICK_DIMENSION_COLUMNS =
  "referrer_domain, utm_source, utm_medium, utm_campaign, landing_page, landing_origin";

export function clickDimensionsOf(alias: string): string {
  const url = `${alias}.affiliate_url`;
  return [
    `analytics_url_host(${alias}.referrer)`,
    `analytics_url_param(${url}, 'utm_source')`,
    `analytics_url_param(${url}, 'utm_medium')`,
    `analytics_url_param(${url}, 'utm_campaign')`,
    `analytics_url_page(${url})`,
    `analytics_url_origin(${url})`,
  ].join(", ");
}
