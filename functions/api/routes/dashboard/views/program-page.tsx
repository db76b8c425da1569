import type { PageDimension, ProgramPage } from "../../../../../lib/dashboard/page/load-program-page.ts";
import type { ProgramWebhooks } from "../../../../../lib/dashboard/page/program-webhooks.ts";
import type { SessionSummary } from "../../../../../lib/identity/session-summary.ts";
import type { MyProgram } from "../../../../../lib/programs/list-my-programs.ts";
import { Analytics } from "./analytics.tsx";
import { ProgramChooser } from "./chooser.tsx";
import { RecentEvents } from "./events.tsx";
import { Layout } from "./layout.tsx";
import { Links } from "./links.tsx";
import { Performance } from "./performance.tsx";
import { Readiness } from "./readiness.tsx";
import { Settings } from "./settings.tsx";
import { Webhooks } from "./webhooks.tsx";

/** The dashboard: the chooser, then the chosen program's sections (or the chooser alone). */
export function DashboardPage(props: {
  summary: SessionSummary;
  programs: MyProgram[];
  program: {
    id: number;
    name: string;
    page: ProgramPage;
    groupBy: PageDimension;
    /** Absent: the section is not shown. */
    webhooks?: ProgramWebhooks;
  } | null;
}) {
  const p = props.program;
  return (
    <Layout title={p ? `${p.name} - Dashboard` : "Dashboard"} email={props.summary.user.email}>
      <ProgramChooser
        workspaces={props.summary.workspaces}
        programs={props.programs}
        selected={p?.id ?? null}
      />
      {p ? (
        <div class="grid" id="program-view" data-program-id={String(p.id)}>
          <h1 class="program-name">{p.name}</h1>
          <Readiness programId={p.id} readiness={p.page.readiness} />
          <Performance report={p.page.performance} />
          <RecentEvents events={p.page.events} />
          <Analytics programId={p.id} report={p.page.analytics} groupBy={p.groupBy} />
          <Links programId={p.id} links={p.page.links} partners={p.page.partners} />
          <Settings programId={p.id} role={p.page.role} settings={p.page.settings} />
          {p.webhooks ? <Webhooks programId={p.id} webhooks={p.webhooks} /> : null}
        </div>
      ) : null}
    </Layout>
  );
}
