// A model picked from those config.json offers. A model the gateway does not
// serve stays selectable (the platform accepts it) but says why it will fail;
// a saved model config.json no longer lists is kept and named as such.
import { useId } from 'react';
import type { ModelKind, ModelStatus } from '../api';
import { useLang } from '../i18n';

export function ModelSelect(props: {
  label: string;
  kind: ModelKind;
  models: ModelStatus[];
  value: string | undefined;
  onChange: (model: string | undefined) => void;
  /** The label of "no model" (undefined), where the setting may be left unset. */
  unset?: string;
}) {
  const { t } = useLang();
  const id = useId();
  const offered = props.models.filter((m) => m.kind === props.kind);
  const chosen = offered.find((m) => m.model === props.value);
  const unknown = props.value !== undefined && props.value !== '' && !chosen;
  const note = chosen && !chosen.served ? chosen.message || t('apps.model.notServed') : unknown ? t('apps.model.unknown', { model: props.value! }) : '';
  return (
    <div className="ap-field">
      <label htmlFor={id}>
        <span>{props.label}</span>
      </label>
      <select
        id={id}
        value={props.value ?? ''}
        aria-describedby={note ? `${id}-note` : undefined}
        onChange={(e) => props.onChange(e.target.value || undefined)}
      >
        {(props.unset !== undefined || props.value === undefined || props.value === '') && <option value="">{props.unset ?? t('apps.model.pick')}</option>}
        {unknown && <option value={props.value}>{t('apps.model.unknownOption', { model: props.value! })}</option>}
        {offered.map((m) => (
          <option key={m.model} value={m.model}>
            {m.served ? modelLabel(m) : t('apps.model.notServedOption', { model: modelLabel(m) })}
          </option>
        ))}
      </select>
      {note && (
        <p id={`${id}-note`} className="notice warn ap-note">
          <span>{note}</span>
        </p>
      )}
    </div>
  );
}

export function modelLabel(m: ModelStatus): string {
  return m.name && m.name !== m.model ? `${m.name} (${m.model})` : m.model;
}
