// Sets one model's price, in one-api's ratios or in units per 1M tokens:
// typing in either pair fills in the other, and the pair typed in last is
// what is sent (so what the reader typed is what the gateway converts). The
// price is then read back from the gateway: `onDone` gets what it holds.
import { useState, type FormEvent } from 'react';
import type { PriceBody, PublicPrice } from '@kbchat/contracts';
import { ActionError, FormButtons } from '../../actions';
import { useLang } from '../../i18n';
import { gatewayApi } from '../gateway-api';
import { pricePath, ratioToUnits, showNumber, unitsToRatio } from './convert';

type Basis = 'ratio' | 'units';

interface Fields {
  ratio: string;
  completion: string;
  input: string;
  output: string;
}

const numberOf = (s: string): number | null => {
  const n = Number(s.trim());
  return s.trim() !== '' && Number.isFinite(n) && n >= 0 ? n : null;
};

export function PriceEditor({ start, models, onDone }: { start: PublicPrice | null; models: string[]; onDone: (fresh: PublicPrice | null) => void }) {
  const { t } = useLang();
  const adding = start === null;
  const [model, setModel] = useState(start?.model ?? '');
  const [basis, setBasis] = useState<Basis>('ratio');
  const [f, setF] = useState<Fields>(() => ({
    ratio: start ? showNumber(start.model_ratio) : '',
    completion: start?.completion_ratio != null ? showNumber(start.completion_ratio) : '',
    input: start ? showNumber(start.input_price) : '',
    output: start ? showNumber(start.output_price) : '',
  }));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const editRatio = (next: Pick<Fields, 'ratio' | 'completion'>) => {
    setBasis('ratio');
    const r = numberOf(next.ratio);
    const c = next.completion.trim() === '' ? 1 : numberOf(next.completion);
    if (r === null || c === null) return setF({ ...f, ...next });
    const u = ratioToUnits(r, c);
    setF({ ...next, input: showNumber(u.input), output: showNumber(u.output) });
  };
  const editUnits = (next: Pick<Fields, 'input' | 'output'>) => {
    setBasis('units');
    const i = numberOf(next.input);
    const o = numberOf(next.output);
    if (i === null || o === null) return setF({ ...f, ...next });
    const r = unitsToRatio(i, o);
    setF({ ...next, ratio: showNumber(r.model_ratio), completion: r.completion_ratio === null ? '' : showNumber(r.completion_ratio) });
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const name = model.trim();
    if (!name) return setError(new Error(t('prices.needModel')));
    let body: PriceBody;
    if (basis === 'ratio') {
      const r = numberOf(f.ratio);
      const c = f.completion.trim() === '' ? 1 : numberOf(f.completion);
      if (r === null || c === null) return setError(new Error(t('prices.badNumber')));
      body = { model_ratio: r, completion_ratio: c };
    } else {
      const i = numberOf(f.input);
      const o = numberOf(f.output);
      if (i === null || o === null) return setError(new Error(t('prices.badNumber')));
      body = { input_price: i, output_price: o };
    }
    setBusy(true);
    setError(null);
    try {
      await gatewayApi(pricePath(name), { method: 'PUT', json: body });
      onDone(await gatewayApi<PublicPrice>(pricePath(name)));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const title = adding ? t('prices.addTitle') : t('prices.editTitle', { model: start.model });
  return (
    <form className="card stack price-editor" onSubmit={submit} aria-label={title}>
      <strong>{title}</strong>
      {adding && (
        <label>
          <span>{t('prices.model')}</span>
          <input value={model} onChange={(e) => setModel(e.target.value)} list="price-models" autoComplete="off" />
          <datalist id="price-models">
            {models.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </label>
      )}
      <div className="price-pairs">
        <fieldset className={basis === 'ratio' ? 'price-pair sent' : 'price-pair'}>
          <legend>
            <span>{t('prices.ratioTerms')}</span>
          </legend>
          <label>
            <span>{t('prices.modelRatio')}</span>
            <input inputMode="decimal" value={f.ratio} onChange={(e) => editRatio({ ratio: e.target.value, completion: f.completion })} />
          </label>
          <label>
            <span>{t('prices.completionRatio')}</span>
            <input inputMode="decimal" value={f.completion} placeholder="1" onChange={(e) => editRatio({ ratio: f.ratio, completion: e.target.value })} />
          </label>
        </fieldset>
        <fieldset className={basis === 'units' ? 'price-pair sent' : 'price-pair'}>
          <legend>
            <span>{t('prices.unitTerms')}</span>
          </legend>
          <label>
            <span>{t('prices.inputPrice')}</span>
            <input inputMode="decimal" value={f.input} onChange={(e) => editUnits({ input: e.target.value, output: f.output })} />
          </label>
          <label>
            <span>{t('prices.outputPrice')}</span>
            <input inputMode="decimal" value={f.output} onChange={(e) => editUnits({ input: f.input, output: e.target.value })} />
          </label>
        </fieldset>
      </div>
      <p className="muted">
        <span>{t(basis === 'ratio' ? 'prices.sendsRatio' : 'prices.sendsUnits')}</span>
      </p>
      <ActionError error={error} />
      <FormButtons busy={busy} label={t('prices.save')} busyLabel={t('prices.saving')} cancelLabel={t('prices.cancel')} onCancel={() => onDone(null)} />
    </form>
  );
}
