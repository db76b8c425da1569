import { projectConfigFile, selfCommand } from "./project-config.ts";

/**
 * What `init` prints: the three places a brand's code talks to the service. The backend calls read the key
 * from AFFILIATE_TRACKING_API_KEY, so the first line sets it from the file `init` wrote (the key itself is
 * shown only masked): pasted without it, the header would be an empty Bearer, which a lead takes as a
 * browser call.
 */
export function integrationSnippets(baseUrl: string, programId: number): string {
  const self = selfCommand();
  return `Your backend's key, from ${projectConfigFile} (keep it in your secrets, not in code):
   export AFFILIATE_TRACKING_API_KEY="$(node -p 'require("./${projectConfigFile}").api_key')"

1. Tracker tag, on every page of your site:
   <script async src="${baseUrl}/tracker.js" data-program-id="${programId}"></script>

2. Lead, from your backend when someone signs up (customer_key: your stable user id):
   curl -X POST ${baseUrl}/api/v1/track/lead \\
     -H "Authorization: Bearer $AFFILIATE_TRACKING_API_KEY" -H "Content-Type: application/json" \\
     -d '{"click_id": "<service_click_id cookie>", "customer_key": "user_123", "email": "ada@example.com"}'

3. Sale, from your backend when a payment succeeds (amount in cents; transaction_id: your payment id):
   curl -X POST ${baseUrl}/api/v1/track/sale \\
     -H "Authorization: Bearer $AFFILIATE_TRACKING_API_KEY" -H "Content-Type: application/json" \\
     -d '{"transaction_id": "pi_123", "customer_key": "user_123", "amount_cents": 4900, "currency": "USD"}'

Then check it: ${self} test chain && ${self} status`;
}
