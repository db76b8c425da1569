import { Layout } from "./layout.tsx";

/** A page that only says something: signed out, refused, or an error (with the request id to quote). */
export function NoticePage(props: {
  title: string;
  message: string;
  action?: { href: string; label: string };
  requestId?: string;
}) {
  return (
    <Layout title={props.title}>
      <section class="card notice" role="alert">
        <h1>{props.title}</h1>
        <p>{props.message}</p>
        {props.requestId ? (
          <p class="muted">
            Request id: <code>{props.requestId}</code>
          </p>
        ) : null}
        {props.action ? (
          <p>
            <a class="button" href={props.action.href}>
              {props.action.label}
            </a>
          </p>
        ) : null}
      </section>
    </Layout>
  );
}
