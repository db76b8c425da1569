import type { ProgramPartner } from "../../../../../lib/dashboard/page/program-partners.ts";
import type { LinkRow } from "../../../../../lib/programs/referral-links.ts";

export function LinkRowView(props: { link: LinkRow }) {
  const l = props.link;
  return (
    <tr data-link-id={String(l.id)} data-active={String(l.active)}>
      <th scope="row">
        <code>{l.short_link}</code>
      </th>
      <td>{l.partner_name ?? "-"}</td>
      <td data-role="state">{l.active ? "on" : "off"}</td>
      <td>
        <button
          type="button"
          class="link-toggle"
          data-link-id={String(l.id)}
          aria-label={`${l.active ? "Turn off" : "Turn on"} ${l.short_link}`}
        >
          {l.active ? "Turn off" : "Turn on"}
        </button>
      </td>
    </tr>
  );
}

/** The program's partners' referral links: turn each off or on, and create one for an active partner. */
export function Links(props: { programId: number; links: LinkRow[]; partners: ProgramPartner[] }) {
  return (
    <section class="card" aria-labelledby="links-title" id="links" data-program-id={String(props.programId)}>
      <h2 id="links-title">Partners and referral links</h2>
      <p class="empty" data-role="empty" hidden={props.links.length > 0}>
        No referral links yet: create one below.
      </p>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">
                Code (<code>?aff=</code>)
              </th>
              <th scope="col">Partner</th>
              <th scope="col">State</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody id="links-rows">
            {props.links.map((link) => (
              <LinkRowView link={link} />
            ))}
          </tbody>
        </table>
      </div>
      <p id="links-error" class="error" role="alert" hidden />
      <h3>Create a link</h3>
      {props.partners.length === 0 ? (
        <p class="empty">
          No active partner yet: add one with <code>POST /api/v1/programs/{props.programId}/partners</code>.
        </p>
      ) : (
        <form id="create-link" class="inline">
          <label for="link-partner">Partner</label>
          <select id="link-partner" name="partner_id">
            {props.partners.map((p) => (
              <option value={String(p.id)}>{p.name}</option>
            ))}
          </select>
          <label for="link-code">Code (optional)</label>
          <input
            id="link-code"
            name="short_link"
            maxlength={64}
            pattern="[A-Za-z0-9][A-Za-z0-9_\-]{2,63}"
            autocomplete="off"
          />
          <button type="submit">Create link</button>
        </form>
      )}
    </section>
  );
}
