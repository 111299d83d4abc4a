// Annotations from a CSV file (question,answer): the file is read here as text
// and sent whole; the platform answers how many it made and which rows it left
// out and why, shown until the next import or until closed.
import type { ImportAnnotationsBody } from '@kbchat/contracts';
import { useState, type ChangeEvent } from 'react';
import { ActionError } from '../actions';
import { api, type AnnotationsImported } from '../api';
import { useLang } from '../i18n';

export function AnnotationImport({ appId, onImported }: { appId: string; onImported: () => Promise<unknown> }) {
  const { t } = useLang();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<AnnotationsImported | null>(null);

  async function pick(e: ChangeEvent<HTMLInputElement>) {
    const input = e.currentTarget;
    const file = input.files?.[0];
    if (!file) return;
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const csv = await file.text();
      setResult(await api<AnnotationsImported>('/api/core/app/annotation/import', { json: { appId, csv } satisfies ImportAnnotationsBody }));
      await onImported();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      // The same file can be picked again (after fixing it).
      input.value = '';
    }
  }

  return (
    <>
      <label className={`ap-button-link secondary ap-file${busy ? ' ap-busy' : ''}`}>
        <span>{t('annotations.import')}</span>
        <input type="file" accept=".csv,text/csv" className="ap-visually-hidden" disabled={busy} onChange={pick} />
      </label>
      {(result || Boolean(error)) && (
        <div className="ap-import-result">
          <ActionError error={error} />
          {result && (
            <div className={`notice ${result.skipped.length > 0 ? 'warn' : 'ok'}`} role="status">
              <p className="ap-note">
                <span>{t('annotations.imported', { created: result.created, skipped: result.skipped.length })}</span>
              </p>
              {result.skipped.length > 0 && (
                <ul className="ap-skipped">
                  {result.skipped.map((s) => (
                    <li key={s.row}>
                      <span>{t('annotations.skippedRow', { row: s.row, reason: s.reason })}</span>
                    </li>
                  ))}
                </ul>
              )}
              <button type="button" className="link" onClick={() => setResult(null)}>
                <span>{t('common.close')}</span>
              </button>
            </div>
          )}
        </div>
      )}
    </>
  );
}
