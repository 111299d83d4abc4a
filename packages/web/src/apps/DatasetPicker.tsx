// Knowledge bases picked from the team's, one checkbox each with its vector
// model (one application searches datasets of one vector model). An id no
// longer in the team's list stays shown, checked, so it can be taken out.
import { Link } from 'wouter';
import type { PublicDataset } from '../api';
import { useLang } from '../i18n';

export function DatasetPicker({
  legend,
  datasets,
  value,
  onChange,
}: {
  legend: string;
  datasets: PublicDataset[];
  value: string[];
  onChange: (ids: string[]) => void;
}) {
  const { t } = useLang();
  const missing = value.filter((id) => !datasets.some((d) => d._id === id));
  const toggle = (id: string, on: boolean) => onChange(on ? [...value, id] : value.filter((x) => x !== id));
  return (
    <fieldset className="ap-datasets">
      <legend>
        <span>{legend}</span>
      </legend>
      {datasets.length === 0 && missing.length === 0 ? (
        <p className="muted row">
          <span>{t('apps.datasets.none')}</span>
          <Link href="~/datasets">
            <span>{t('apps.datasets.create')}</span>
          </Link>
        </p>
      ) : (
        <ul className="ap-checklist">
          {datasets.map((d) => (
            <li key={d._id}>
              <label className="ap-inline">
                <input type="checkbox" checked={value.includes(d._id)} onChange={(e) => toggle(d._id, e.target.checked)} />
                <span className="ap-name">{d.name}</span>
              </label>
              <code className="ap-small muted">{d.vectorModel.model || t('apps.datasets.noVector')}</code>
            </li>
          ))}
          {missing.map((id) => (
            <li key={id}>
              <label className="ap-inline">
                <input type="checkbox" checked onChange={() => toggle(id, false)} />
                <span>{t('apps.datasets.missing', { id })}</span>
              </label>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}
