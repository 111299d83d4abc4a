// A textarea with its label beside it rather than around it: a label that
// wraps a textarea also holds the textarea's text, which then becomes part
// of the control's accessible name.
import { useId, type TextareaHTMLAttributes } from 'react';

export function TextField({ label, ...props }: { label: string } & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  return (
    <div className="ds-field">
      <label htmlFor={id}>
        <span>{label}</span>
      </label>
      <textarea id={id} {...props} />
    </div>
  );
}
