// A new application: a name and the LLM that answers (everything else is
// set on its settings page). A model the gateway does not serve is never the
// default, and says why when picked.
import type { CreateAppBody } from '@kbchat/contracts';
import { useState, type FormEvent } from 'react';
import type { ModelList } from '../api';
import { useLang } from '../i18n';
import { ActionError } from '../actions';
import { ModelSelect } from './ModelSelect';
import { apiEnvelope } from '../api';

export function CreateApp({ models, onCreated }: { models: ModelList; onCreated: (id: string) => void }) {
  const { t } = useLang();
  const llms = models.models.filter((m) => m.kind === 'llm');
  const [name, setName] = useState('');
  const [intro, setIntro] = useState('');
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const model = chosen ?? (llms.find((m) => m.served) ?? llms[0])?.model;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { data: id } = await apiEnvelope<string>('/api/core/app/create', {
        method: 'POST',
        json: { name: name.trim(), intro, model } satisfies CreateAppBody,
      });
      onCreated(id);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return (
    <form className="card stack ap-create" onSubmit={submit} aria-labelledby="ap-create-title">
      <h2 id="ap-create-title">{t('apps.create.title')}</h2>
      <div className="ap-grid2">
        <label>
          <span>{t('common.name')}</span>
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </label>
        {llms.length === 0 ? (
          <p className="notice warn">
            <span>{t('apps.create.noModels')}</span>
          </p>
        ) : (
          <ModelSelect label={t('apps.model')} kind="llm" models={models.models} value={model} onChange={setChosen} />
        )}
      </div>
      <label>
        <span>{t('apps.intro')}</span>
        <input value={intro} onChange={(e) => setIntro(e.target.value)} maxLength={5000} />
      </label>
      {!models.gateway.reachable && models.gateway.message && (
        <p className="notice warn">
          <span>{models.gateway.message}</span>
        </p>
      )}
      <div className="row">
        <button type="submit" disabled={busy || !name.trim() || !model}>
          <span>{t('apps.create.submit')}</span>
        </button>
      </div>
      <ActionError error={error} />
    </form>
  );
}
