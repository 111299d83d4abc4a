// A new knowledge base: its name and its vector model, which is fixed once
// it is made. Models the gateway does not serve are listed with the reason,
// and never chosen by default.
import type { CreateDatasetBody } from '@kbchat/contracts';
import { useState, type FormEvent } from 'react';
import { api } from '../api';
import { useModelList } from '../models';
import { useLang } from '../i18n';
import { Loading } from '../ui';
import { ActionError } from '../actions';

export function CreateDataset({ onCreated }: { onCreated: (id: string) => void }) {
  const { t } = useLang();
  const { data: models } = useModelList();
  const embedding = models?.models.filter((m) => m.kind === 'embedding') ?? [];
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // Until someone picks, the first model the gateway serves (or none).
  const model = chosen ?? embedding.find((m) => m.served)?.model ?? '';
  const status = embedding.find((m) => m.model === model);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const id = await api<string>('/api/core/dataset/create', { json: { name: name.trim(), vectorModel: model || undefined } satisfies CreateDatasetBody });
      setName('');
      onCreated(id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (!models) return <Loading />;
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="ds-create-title">
      <h2 id="ds-create-title">{t('datasets.create.title')}</h2>
      <label>
        <span>{t('common.name')}</span>
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      </label>
      {embedding.length === 0 ? (
        <p className="notice warn">
          <span>{t('datasets.create.noModels')}</span>
        </p>
      ) : (
        <label>
          <span>{t('datasets.model')}</span>
          <select value={model} onChange={(e) => setChosen(e.target.value)}>
            {model === '' && <option value="">{t('datasets.create.pickModel')}</option>}
            {embedding.map((m) => (
              <option key={m.model} value={m.model}>
                {m.served ? t('datasets.create.modelOption', { model: m.model, name: m.name }) : t('datasets.create.modelNotServed', { model: m.model })}
              </option>
            ))}
          </select>
        </label>
      )}
      {status && !status.served && status.message && (
        <p className="notice warn">
          <span>{status.message}</span>
        </p>
      )}
      {!models.gateway.reachable && models.gateway.message && (
        <p className="notice warn">
          <span>{models.gateway.message}</span>
        </p>
      )}
      <p className="muted">
        <span>{t('datasets.create.fixed')}</span>
      </p>
      <div className="row">
        <button type="submit" disabled={busy || !name.trim()}>
          <span>{t('datasets.create.submit')}</span>
        </button>
      </div>
      <ActionError error={error} />
    </form>
  );
}
