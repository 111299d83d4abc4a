// The form's foot, kept in view: save, discard, whether there are unsaved
// changes or the save went through, and what stops or follows a save (the
// form's own checks, the platform's 400 naming the field, its warnings).
import { useLang } from '../i18n';
import { ActionError } from '../actions';
import type { Problem } from './draft';

export function SaveBar(props: { dirty: boolean; busy: boolean; saved: boolean; problems: Problem[]; error: unknown; warning: string; onDiscard: () => void }) {
  const { t } = useLang();
  // Kept in view only while it has something to do or say; otherwise it waits at the form's end.
  const floating = props.dirty || props.saved || props.problems.length > 0 || Boolean(props.error) || Boolean(props.warning);
  return (
    <div className={`ap-savebar card${floating ? ' ap-floating' : ''}`}>
      {props.problems.length > 0 && (
        <ul role="alert" className="error ap-problems">
          {props.problems.map((p) => (
            <li key={`${p.key}:${JSON.stringify(p.vars)}`}>
              <span>{t(p.key, p.vars)}</span>
            </li>
          ))}
        </ul>
      )}
      <ActionError error={props.error} />
      {props.warning && (
        <p className="notice warn ap-warning" role="status">
          <span>{props.warning}</span>
        </p>
      )}
      <div className="row">
        <button type="submit" disabled={props.busy || !props.dirty || props.problems.length > 0}>
          <span>{props.busy ? t('apps.saving') : t('common.save')}</span>
        </button>
        <button type="button" className="secondary" disabled={props.busy || !props.dirty} onClick={props.onDiscard}>
          <span>{t('apps.discard')}</span>
        </button>
        <span role="status" className="ap-state">
          {props.dirty ? <span className="badge warn">{t('apps.unsaved')}</span> : props.saved ? <span className="badge ok">{t('common.saved')}</span> : null}
        </span>
      </div>
    </div>
  );
}
