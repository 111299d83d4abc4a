// The inputs of a share link's settings, for its create form and its edit
// form: the name, expiry and per-visitor limit first, then the link-wide
// limits, the usage points, the sign-in check and the sites that may embed it.
import { useId, type ReactNode } from 'react';
import { useLang } from '../i18n';
import type { LinkFields } from './share-form';

type Props = { value: LinkFields; onChange: (next: LinkFields) => void; expiresLabel?: string };

export function ShareMainFields({ value, onChange, expiresLabel }: Props) {
  const { t } = useLang();
  const set = (k: keyof LinkFields) => (e: { target: { value: string } }) => onChange({ ...value, [k]: e.target.value });
  return (
    <div className="row share-fields">
      <label className="grow">
        <span>{t('share.name')}</span>
        <input value={value.name} onChange={set('name')} maxLength={200} required />
      </label>
      <label>
        <span>{expiresLabel ?? t('share.expires')}</span>
        <input type="date" value={value.expires} onChange={set('expires')} />
      </label>
      <label>
        <span>{t('share.qpm')}</span>
        <input type="number" min={1} max={100_000} step={1} value={value.qpm} onChange={set('qpm')} />
      </label>
    </div>
  );
}

export function ShareMoreFields({ value, onChange }: Props) {
  const { t } = useLang();
  const set = (k: keyof LinkFields) => (e: { target: { value: string } }) => onChange({ ...value, [k]: e.target.value });
  const id = useId();
  return (
    <div className="ap-grid2 share-more">
      <div className="ap-field">
        <label>
          <span>{t('share.linkQpm')}</span>
          <input type="number" min={1} max={1_000_000} step={1} value={value.linkQpm} onChange={set('linkQpm')} />
        </label>
      </div>
      <Hinted id={`${id}-points`} hint={t('share.maxUsagePoints.hint')}>
        <span>{t('share.maxUsagePoints')}</span>
        <input type="number" min={0} step="any" value={value.maxUsagePoints} onChange={set('maxUsagePoints')} aria-describedby={`${id}-points`} />
      </Hinted>
      <Hinted id={`${id}-hook`} hint={t('share.hookUrl.hint')}>
        <span>{t('share.hookUrl')}</span>
        <input
          type="url"
          value={value.hookUrl}
          onChange={set('hookUrl')}
          maxLength={2000}
          placeholder="https://auth.example.com/kbchat"
          aria-describedby={`${id}-hook`}
        />
      </Hinted>
      <Hinted id={`${id}-origins`} hint={t('share.origins.hint')}>
        <span>{t('share.origins')}</span>
        <textarea
          value={value.origins}
          onChange={set('origins')}
          rows={3}
          className="share-origins"
          placeholder="https://www.example.com"
          spellCheck={false}
          aria-describedby={`${id}-origins`}
        />
      </Hinted>
    </div>
  );
}

/** A label and its input, with a hint under them that describes the input (not part of its name). */
function Hinted({ id, hint, children }: { id: string; hint: string; children: ReactNode }) {
  return (
    <div className="ap-field">
      <label>{children}</label>
      <small id={id} className="muted ap-hint">
        <span>{hint}</span>
      </small>
    </div>
  );
}
