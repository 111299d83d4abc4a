// The chunking settings every import takes (the API's trainingType,
// chunkSize, chunkSplitter, and qaPrompt for question/answer pairs).
import { useId } from 'react';
import { useLang } from '../i18n';
import { TextField } from './Field';

export interface ChunkSettings {
  trainingType: 'chunk' | 'qa';
  /** As typed; empty means the vector model's default. */
  chunkSize: string;
  chunkSplitter: string;
  qaPrompt: string;
}

export const DEFAULT_CHUNKING: ChunkSettings = { trainingType: 'chunk', chunkSize: '', chunkSplitter: '', qaPrompt: '' };

/** The fields the import routes take (unset ones left out, so the platform's defaults apply). */
export function chunkBody(s: ChunkSettings): { trainingType: 'chunk' | 'qa'; chunkSize?: number; chunkSplitter?: string; qaPrompt?: string } {
  const size = Number.parseInt(s.chunkSize, 10);
  return {
    trainingType: s.trainingType,
    ...(Number.isFinite(size) ? { chunkSize: size } : {}),
    ...(s.chunkSplitter ? { chunkSplitter: s.chunkSplitter } : {}),
    ...(s.trainingType === 'qa' && s.qaPrompt.trim() ? { qaPrompt: s.qaPrompt } : {}),
  };
}

export function ChunkOptions({ value, onChange, defaultSize }: { value: ChunkSettings; onChange: (v: ChunkSettings) => void; defaultSize?: number }) {
  const { t, count } = useLang();
  const id = useId();
  const set = (patch: Partial<ChunkSettings>) => onChange({ ...value, ...patch });
  return (
    <fieldset className="ds-chunking">
      <legend>{t('datasets.chunking.title')}</legend>
      <div className="ds-radios" role="radiogroup" aria-label={t('datasets.chunking.mode')}>
        <label className="ds-inline">
          <input type="radio" name={`${id}-mode`} checked={value.trainingType === 'chunk'} onChange={() => set({ trainingType: 'chunk' })} />
          <span>{t('datasets.chunking.chunk')}</span>
        </label>
        <label className="ds-inline">
          <input type="radio" name={`${id}-mode`} checked={value.trainingType === 'qa'} onChange={() => set({ trainingType: 'qa' })} />
          <span>{t('datasets.chunking.qa')}</span>
        </label>
      </div>
      <div className="ds-grid2">
        <label>
          <span>{t('datasets.chunking.size')}</span>
          <input
            type="number"
            min={16}
            max={32000}
            value={value.chunkSize}
            placeholder={defaultSize ? t('datasets.chunking.sizeDefault', { n: count(defaultSize) }) : undefined}
            onChange={(e) => set({ chunkSize: e.target.value })}
          />
        </label>
        <label>
          <span>{t('datasets.chunking.splitter')}</span>
          <input
            value={value.chunkSplitter}
            maxLength={100}
            placeholder={t('datasets.chunking.splitterHint')}
            onChange={(e) => set({ chunkSplitter: e.target.value })}
          />
        </label>
      </div>
      {value.trainingType === 'qa' && (
        <TextField
          label={t('datasets.chunking.qaPrompt')}
          value={value.qaPrompt}
          maxLength={10000}
          placeholder={t('datasets.chunking.qaPromptHint')}
          onChange={(e) => set({ qaPrompt: e.target.value })}
        />
      )}
      {value.trainingType === 'qa' && (
        <p className="muted ds-small">
          <span>{t('datasets.chunking.qaNote')}</span>
        </p>
      )}
    </fieldset>
  );
}
