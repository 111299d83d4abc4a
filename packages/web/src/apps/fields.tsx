// Labelled controls of the application forms. Labels point at their control
// by id (a label wrapping a textarea would take its text into the control's
// accessible name); a hint is tied to its control by aria-describedby.
import { useId, useState, type ReactNode } from 'react';

function Hint({ id, children }: { id: string; children?: ReactNode }) {
  if (!children) return null;
  return (
    <div id={id} className="ap-hint muted">
      {children}
    </div>
  );
}

export function TextField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: ReactNode;
  multiline?: boolean;
  rows?: number;
  required?: boolean;
  maxLength?: number;
  placeholder?: string;
  code?: boolean;
}) {
  const id = useId();
  const control = {
    id,
    value: props.value,
    required: props.required,
    maxLength: props.maxLength,
    placeholder: props.placeholder,
    'aria-describedby': props.hint ? `${id}-hint` : undefined,
    className: props.code ? 'ap-code' : undefined,
  };
  return (
    <div className="ap-field">
      <label htmlFor={id}>
        <span>{props.label}</span>
      </label>
      {props.multiline ? (
        <textarea {...control} rows={props.rows ?? 4} onChange={(e) => props.onChange(e.target.value)} />
      ) : (
        <input {...control} onChange={(e) => props.onChange(e.target.value)} />
      )}
      <Hint id={`${id}-hint`}>{props.hint}</Hint>
    </div>
  );
}

const show = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '' : String(n));
const parse = (text: string) => (text.trim() === '' ? undefined : Number(text));

/**
 * A number, or undefined when empty. The text is kept as typed ("0." on the
 * way to "0.5") and follows the value only when it changes from outside
 * (a reset after saving).
 */
export function NumberField(props: {
  label: string;
  value: number | undefined;
  onChange: (value: number | undefined) => void;
  min?: number;
  max?: number;
  step?: number;
  hint?: ReactNode;
  placeholder?: string;
  /** Why the value cannot be saved, shown under the field. */
  error?: string;
}) {
  const id = useId();
  const [text, setText] = useState(show(props.value));
  // Adjusted while rendering (not in an effect), so the new text shows in the same paint.
  const [seen, setSeen] = useState(props.value);
  if (!Object.is(seen, props.value)) {
    setSeen(props.value);
    if (!Object.is(parse(text), props.value)) setText(show(props.value));
  }
  return (
    <div className="ap-field">
      <label htmlFor={id}>
        <span>{props.label}</span>
      </label>
      <input
        id={id}
        type="number"
        inputMode="decimal"
        value={text}
        min={props.min}
        max={props.max}
        step={props.step ?? 'any'}
        placeholder={props.placeholder}
        aria-describedby={[props.hint && `${id}-hint`, props.error && `${id}-error`].filter(Boolean).join(' ') || undefined}
        aria-invalid={props.error ? true : undefined}
        onChange={(e) => {
          setText(e.target.value);
          props.onChange(parse(e.target.value));
        }}
      />
      <Hint id={`${id}-hint`}>{props.hint}</Hint>
      {props.error && (
        <div id={`${id}-error`} className="ap-hint error" role="alert">
          <span>{props.error}</span>
        </div>
      )}
    </div>
  );
}

export function SelectField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  options: { value: string; label: string }[];
  hint?: ReactNode;
}) {
  const id = useId();
  return (
    <div className="ap-field">
      <label htmlFor={id}>
        <span>{props.label}</span>
      </label>
      <select id={id} value={props.value} aria-describedby={props.hint ? `${id}-hint` : undefined} onChange={(e) => props.onChange(e.target.value)}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <Hint id={`${id}-hint`}>{props.hint}</Hint>
    </div>
  );
}

export function CheckField(props: { label: string; checked: boolean; onChange: (checked: boolean) => void; hint?: ReactNode }) {
  const id = useId();
  return (
    <div className="ap-check">
      <label htmlFor={id} className="ap-inline">
        <input
          id={id}
          type="checkbox"
          checked={props.checked}
          aria-describedby={props.hint ? `${id}-hint` : undefined}
          onChange={(e) => props.onChange(e.target.checked)}
        />
        <span>{props.label}</span>
      </label>
      <Hint id={`${id}-hint`}>{props.hint}</Hint>
    </div>
  );
}

/** `{{name}}` placeholders shown as code chips, each in its own element. */
export function Placeholders({ label, names }: { label: string; names: string[] }) {
  return (
    <div className="ap-placeholders">
      <span>{label}</span>
      {names.map((n) => (
        <code key={n} className="ap-chip">{`{{${n}}}`}</code>
      ))}
    </div>
  );
}
