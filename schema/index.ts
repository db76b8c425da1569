export * from "./balances.ts";
export * from "./commissions.ts";
export * from "./customers.ts";
export * from "./events.ts";
export * from "./notifications.ts";
export * from "./partners.ts";
export * from "./programs.ts";
export * from "./workspaces.ts";
