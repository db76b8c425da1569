import type { MyProgram } from "../../../../../lib/programs/list-my-programs.ts";

interface Workspace {
  advertiser_id: number;
  name: string;
  role: string;
}

/**
 * Workspace and program choice: one select grouped by workspace, sent as `?program=` (a plain GET form, so
 * it works without the script). Workspaces without programs are listed as such.
 */
export function ProgramChooser(props: {
  workspaces: Workspace[];
  programs: MyProgram[];
  selected: number | null;
}) {
  const empty = props.workspaces.filter(
    (w) => !props.programs.some((p) => p.workspace_id === w.advertiser_id),
  );
  return (
    <section class="card chooser" aria-labelledby="chooser-title">
      <h2 id="chooser-title">Workspace and program</h2>
      {props.programs.length === 0 ? (
        <p class="empty">
          No programs yet. Create one with the command-line tool (<code>affiliate-tracking-service init</code>
          ) or <code>POST /api/v1/programs</code>, then reload this page.
        </p>
      ) : (
        <form method="get" action="/dashboard" class="inline">
          <label for="program">Program</label>
          <select id="program" name="program">
            {props.workspaces.map((w) => {
              const programs = props.programs.filter((p) => p.workspace_id === w.advertiser_id);
              if (programs.length === 0) return null;
              return (
                <optgroup label={`${w.name} (${w.role})`}>
                  {programs.map((p) => (
                    <option value={String(p.id)} selected={p.id === props.selected}>
                      {p.name} ({p.domain})
                    </option>
                  ))}
                </optgroup>
              );
            })}
          </select>
          <button type="submit">Open</button>
        </form>
      )}
      {empty.length > 0 ? (
        <p class="muted">Workspaces without programs: {empty.map((w) => w.name).join(", ")}</p>
      ) : null}
    </section>
  );
}
