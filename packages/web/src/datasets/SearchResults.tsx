// A searchTest answer: what was searched and how, then each chunk with every
// score the platform gave it and a line saying why it ranked where it did, and
// (collapsed) the chunks found but dropped by the similarity threshold or the
// token budget, each with the rule that dropped it.
import { Link } from 'wouter';
import type { SearchTestAnswer } from '../api';
import { useLang, type Translate } from '../i18n';
import { SourcePages } from '../ui';

export type SearchAnswer = SearchTestAnswer;
type Item = SearchAnswer['list'][number];
type Score = Item['score'][number];

const ORDER: Score['type'][] = ['embedding', 'fullText', 'rrf', 'reRank'];

export function SearchResults({ answer }: { answer: SearchAnswer }) {
  const { t, count } = useLang();
  const queries = answer.queryExtensionResult?.queries ?? [];
  return (
    <section className="stack" aria-labelledby="ds-results-title" aria-live="polite">
      <h3 id="ds-results-title">{t('datasets.searchTest.results', { n: count(answer.list.length) })}</h3>
      <p className="row muted ds-small">
        <span>{t('datasets.searchTest.took', { duration: answer.duration })}</span>
        <span>{t(`datasets.mode.${answer.searchMode}`)}</span>
        <span>{t('datasets.searchTest.usedSimilarity', { n: answer.similarity })}</span>
        <span>{t('datasets.searchTest.usedLimit', { n: count(answer.limit) })}</span>
        <span>{answer.usingReRank ? t('datasets.searchTest.rerankOn') : t('datasets.searchTest.rerankOff')}</span>
      </p>
      {answer.queryExtensionResult && (
        <div className="card stack">
          <span>{t('datasets.searchTest.extended', { model: answer.queryExtensionResult.model })}</span>
          {queries.length === 0 ? (
            <span className="muted">{t('datasets.searchTest.noExtended')}</span>
          ) : (
            <ul>
              {queries.map((q, i) => (
                <li key={i}>
                  <span>{q}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {answer.note && (
        <p className="notice warn">
          <span>{answer.note}</span>
        </p>
      )}
      {answer.questionCut && (
        <p className="notice warn">
          <span>{t('datasets.searchTest.cut', { searched: count(answer.questionCut.searchedChars), total: count(answer.questionCut.questionChars) })}</span>
        </p>
      )}
      {answer.list.length === 0 ? (
        <p className="muted">
          <span>{t('datasets.searchTest.nothing')}</span>
        </p>
      ) : (
        <ol className="ds-results">
          {answer.list.map((item, i) => (
            <Result key={item.id} item={item} place={i + 1} />
          ))}
        </ol>
      )}
      {answer.dropped.length > 0 && <Dropped answer={answer} />}
    </section>
  );
}

function Dropped({ answer }: { answer: SearchAnswer }) {
  const { t, lang, count } = useLang();
  const { dropped } = answer;
  return (
    <details className="card ds-dropped">
      <summary>
        <span>{t('datasets.searchTest.dropped', { n: count(dropped.length) })}</span>
      </summary>
      <p className="muted ds-small">
        <span>{t('datasets.searchTest.droppedOf', { found: count(answer.found), kept: count(answer.list.length) })}</span>
      </p>
      <ol className="ds-dropped-list">
        {dropped.map((d) => {
          const scores = [...d.score].sort((x, y) => ORDER.indexOf(x.type) - ORDER.indexOf(y.type));
          return (
            <li key={d.id} className="stack">
              <div className="ds-chunk-head">
                <span className="badge">
                  <span>
                    {d.reason === 'similarity'
                      ? t('datasets.searchTest.belowSimilarity', { value: d.similarityValue.toFixed(3), threshold: String(answer.similarity) })
                      : t('datasets.searchTest.pastLimit', { tokens: d.tokens, limit: String(answer.limit) })}
                  </span>
                </span>
                <span className="muted ds-small">
                  <Link href={`/collections/${encodeURIComponent(d.collectionId)}`}>{d.sourceName}</Link>
                  <SourcePages pages={d.pages} rows={d.rows} />
                  <span> · </span>
                  <span>{t('datasets.chunks.number', { n: d.chunkIndex + 1 })}</span>
                </span>
              </div>
              <p className="ds-text">
                <span>{d.q}</span>
              </p>
              <p className="muted ds-small">
                <span>{why(scores, t, lang)}</span>
              </p>
            </li>
          );
        })}
      </ol>
    </details>
  );
}

function Result({ item, place }: { item: Item; place: number }) {
  const { t, lang } = useLang();
  const scores = [...item.score].sort((x, y) => ORDER.indexOf(x.type) - ORDER.indexOf(y.type));
  return (
    <li className="card stack ds-result" aria-label={t('datasets.searchTest.resultN', { n: place })}>
      <div className="ds-chunk-head">
        <span className="badge">{t('datasets.searchTest.place', { n: place })}</span>
        <span className="muted ds-small">
          <Link href={`/collections/${encodeURIComponent(item.collectionId)}`}>{item.sourceName}</Link>
          <SourcePages pages={item.pages} rows={item.rows} />
          <span> · </span>
          <span>{t('datasets.chunks.number', { n: item.chunkIndex + 1 })}</span>
        </span>
      </div>
      <p className="ds-text">
        <span>{item.q}</span>
      </p>
      {item.a && (
        <p className="ds-text muted">
          <span>{item.a}</span>
        </p>
      )}
      <table className="ds-scores">
        <thead>
          <tr>
            <th>{t('datasets.score.kind')}</th>
            <th>{t('datasets.score.value')}</th>
            <th>{t('datasets.score.rank')}</th>
          </tr>
        </thead>
        <tbody>
          {scores.map((s) => (
            <tr key={s.type}>
              <td>
                <span>{t(`datasets.score.${s.type}`)}</span>
              </td>
              <td>
                <code>{s.value.toFixed(4)}</code>
              </td>
              <td>
                <span>{s.index >= 0 ? String(s.index + 1) : '–'}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted ds-small ds-why">
        <span>{why(scores, t, lang)}</span>
      </p>
    </li>
  );
}

/** "2nd by meaning, 1st by keywords, fused rank 1": each list's rank, in the reader's language. */
export function why(scores: Score[], t: Translate, lang: string): string {
  const parts = scores.filter((s) => s.index >= 0).map((s) => t(`datasets.why.${s.type}`, { rank: ordinal(s.index + 1, lang), n: s.index + 1 }));
  return parts.length ? parts.join(t('datasets.why.sep')) : t('datasets.why.none');
}

const enOrdinal = new Intl.PluralRules('en-US', { type: 'ordinal' });
const SUFFIX: Record<string, string> = { one: 'st', two: 'nd', few: 'rd', other: 'th' };
function ordinal(n: number, lang: string): string {
  return lang === 'zh' ? `第 ${n}` : `${n}${SUFFIX[enOrdinal.select(n)] ?? 'th'}`;
}
