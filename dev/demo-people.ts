/**
 * The demo's people: one per case the sign-in rules distinguish. Seeded into the database by
 * `dev/seed.ts` (as members of the demo advertiser) and listed on the local provider's sign-in page.
 */
export interface DemoPerson {
  email: string;
  /** Their role in the demo advertiser's workspace. */
  role: "owner" | "member";
  /** What the local provider says about the email (the sign-in page's shortcut). */
  providerEmailVerified: boolean;
  blocked: boolean;
  label: string;
}

export const DEMO_PEOPLE: readonly DemoPerson[] = [
  {
    email: "owner@demo-brand.example",
    role: "owner",
    providerEmailVerified: true,
    blocked: false,
    label: "owner of the demo workspace",
  },
  {
    email: "member@demo-brand.example",
    role: "member",
    providerEmailVerified: true,
    blocked: false,
    label: "member (cannot regenerate keys)",
  },
  {
    email: "blocked@demo-brand.example",
    role: "member",
    providerEmailVerified: true,
    blocked: true,
    label: "blocked account (refused)",
  },
  {
    email: "unverified@demo-brand.example",
    role: "member",
    providerEmailVerified: false,
    blocked: false,
    label: "unverified provider email (refused)",
  },
];
