// A run's difference to the run before it: what changed around the checks
// (chunks, vector model), then each check that changed, newly failing first,
// with the ranks that moved.
import type { CheckDiff, RankChange, RunDiff } from '../api';
import { useLang, type Translate } from '../i18n';
import { formatTime } from '../ui';

export function CheckDiffView({ diff }: { diff: RunDiff }) {
  const { t, lang, count } = useLang();
  if (!diff.previousRunId)
    return (
      <p className="muted">
        <span>{t('checks.diff.first')}</span>
      </p>
    );
  const shown = diff.checks.filter((c) => c.change !== 'stillPassing' || c.rankChanges.length > 0);
  const unchanged = diff.checks.length - shown.length;
  return (
    <div className="stack ck-diff">
      <p className="row ds-small">
        {diff.previousStartedAt !== null && <span>{t('checks.diff.since', { time: formatTime(diff.previousStartedAt, lang) })}</span>}
        <span className={diff.chunkingChanged ? 'badge warn' : 'muted'}>
          {diff.chunkingChanged ? t('checks.diff.chunking') : t('checks.diff.sameChunking')}
        </span>
        {diff.vectorModelChanged && <span className="badge warn">{t('checks.diff.model', diff.vectorModelChanged)}</span>}
      </p>
      {shown.length === 0 ? (
        <p className="muted">
          <span>{t('checks.diff.nothing')}</span>
        </p>
      ) : (
        <ul className="ck-diff-list">
          {shown.map((c) => (
            <DiffRow key={c.checkId} c={c} />
          ))}
        </ul>
      )}
      {unchanged > 0 && shown.length > 0 && (
        <p className="muted ds-small">
          <span>{t('checks.diff.unchanged', { n: count(unchanged) })}</span>
        </p>
      )}
      {diff.removed.length > 0 && (
        <p className="muted ds-small">
          <span>{t('checks.diff.removed', { n: count(diff.removed.length) })}</span>
        </p>
      )}
    </div>
  );
}

const TONE: Record<CheckDiff['change'], string> = { newlyFailing: 'bad', newlyPassing: 'ok', stillFailing: 'bad', new: '', stillPassing: 'ok' };

function DiffRow({ c }: { c: CheckDiff }) {
  const { t } = useLang();
  return (
    <li className={`ck-diff-row ck-${c.change}`}>
      <span className={`badge ${TONE[c.change]}`}>{t(`checks.change.${c.change}`)}</span>
      <span className="ck-question">{c.question}</span>
      {c.edited && <span className="muted ds-small">{t('checks.edited')}</span>}
      {c.rankChanges.length > 0 && (
        <ul className="ck-moves ds-small">
          {c.rankChanges.map((m) => (
            <li key={m.index}>
              <span>{moveText(t, m)}</span>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

function moveText(t: Translate, m: RankChange): string {
  const text = m.expectation.text ?? m.expectation.label ?? m.expectation.dataId ?? m.expectation.collectionId ?? '';
  if (m.after === null) return t('checks.move.lost', { text, before: m.before ?? '' });
  if (m.before === null) return t('checks.move.found', { text, after: m.after });
  return t('checks.move.rank', { text, before: m.before, after: m.after });
}
