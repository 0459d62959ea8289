import { useId, type InputHTMLAttributes, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react';

interface Labelled {
  label: string;
  hint?: string;
}

/** A labelled input (label tied by id, hint tied by aria-describedby). */
export function TextField({ label, hint, ...input }: Labelled & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/** A labelled multi-line input. */
export function TextAreaField({ label, hint, ...input }: Labelled & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/** A labelled select over fixed options. */
export function SelectField({
  label,
  hint,
  options,
  ...select
}: Labelled & SelectHTMLAttributes<HTMLSelectElement> & { options: Array<{ value: string; label: string }> }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...select}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/** A labelled checkbox. */
export function CheckboxField({ label, ...input }: { label: string } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field field-check">
      <input id={id} type="checkbox" {...input} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** The admin's tenant scope for a new resource (others are pinned to their own tenant by the gateway). */
export function TenantField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <TextField
      label="Tenant ID (optional)"
      hint="Empty: global, visible to every tenant."
      value={value}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}
