import { describeError } from '../api.js';

/** An API or network failure in words, announced to screen readers. */
export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <div className="notice notice-error" role="alert">
      {title ? <strong>{title}: </strong> : null}
      {describeError(error)}
    </div>
  );
}

/** A loading indicator that screen readers announce politely. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

/** A quiet line for empty lists. */
export function Empty({ children }: { children: React.ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** A success line, announced politely. */
export function Success({ children }: { children: React.ReactNode }) {
  return (
    <div className="notice notice-success" role="status">
      {children}
    </div>
  );
}
