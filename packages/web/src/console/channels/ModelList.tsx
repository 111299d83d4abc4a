// A channel's models, each with its last test (latency in green, or the
// upstream's exact error) and a button to test it alone; an auto-disabled one
// says why (the failures that did it), when the gateway tests it again, and
// can be enabled by hand. A long list shows the models that need a look
// first and the rest on request.
import { useState } from 'react';
import { useLang } from '../../i18n';
import { formatClock, formatTime } from '../../ui';
import type { PublicChannel, PublicDisabledModel, PublicModelTest } from './channels-api';

const SHOWN = 6;

export function ModelList({
  channel: c,
  busyModel,
  onTest,
  onEnable,
}: {
  channel: PublicChannel;
  busyModel: string | null;
  onTest: (model: string) => void;
  onEnable: (model: string) => void;
}) {
  const { t } = useLang();
  const [all, setAll] = useState(false);
  const tests = new Map(c.last_tests.map((x) => [x.model, x]));
  const disabled = new Map(c.disabled_models.map((d) => [d.model, d]));
  const needsLook = (m: string) => disabled.has(m) || tests.get(m)?.ok === false;
  // Collapsed: the models that failed or are disabled come first, so that they are never hidden.
  const ordered = all ? c.models : [...c.models.filter(needsLook), ...c.models.filter((m) => !needsLook(m))].slice(0, SHOWN);
  return (
    <>
      <ul className="ch-models">
        {ordered.map((m) => (
          <ModelLine
            key={m}
            channelName={c.name}
            model={m}
            upstream={c.model_mapping[m]}
            test={tests.get(m)}
            disabled={disabled.get(m)}
            busy={busyModel === m || busyModel === 'all'}
            enabling={busyModel === `enable:${m}`}
            onTest={() => onTest(m)}
            onEnable={() => onEnable(m)}
          />
        ))}
      </ul>
      {c.models.length > SHOWN && (
        <button type="button" className="link ch-more" aria-expanded={all} onClick={() => setAll(!all)}>
          <span>{all ? t('channels.fewerModels') : t('channels.allModels', { n: c.models.length })}</span>
        </button>
      )}
    </>
  );
}

function ModelLine(props: {
  channelName: string;
  model: string;
  upstream?: string;
  test?: PublicModelTest;
  disabled?: PublicDisabledModel;
  busy: boolean;
  enabling: boolean;
  onTest: () => void;
  onEnable: () => void;
}) {
  const { t } = useLang();
  const { model, test, disabled } = props;
  return (
    <li className="ch-model" data-model={model}>
      <div className="ch-model-head">
        <code>{model}</code>
        {props.upstream && <span className="muted ch-small">{t('channels.mappedTo', { upstream: props.upstream })}</span>}
        {disabled && <span className="badge warn">{t('channels.autoDisabled')}</span>}
        <TestResult test={test} busy={props.busy} />
        <button
          type="button"
          className="link ch-test-one"
          disabled={props.busy}
          aria-label={t('channels.testModelNamed', { model, name: props.channelName })}
          onClick={props.onTest}
        >
          <span>{t('channels.testModel')}</span>
        </button>
      </div>
      {disabled && <DisabledInfo disabled={disabled} channelName={props.channelName} enabling={props.enabling} onEnable={props.onEnable} />}
    </li>
  );
}

function TestResult({ test, busy }: { test?: PublicModelTest; busy: boolean }) {
  const { t, lang } = useLang();
  if (busy) return <span className="muted ch-small">{t('channels.testing')}</span>;
  if (!test) return <span className="muted ch-small">{t('channels.notTested')}</span>;
  const when = formatTime(test.tested_at, lang);
  if (test.ok)
    return (
      <span className="ch-ok" data-testid="test-ok" title={when}>
        {t('channels.latency', { ms: test.latency_ms })}
      </span>
    );
  return (
    <span className="ch-bad" data-testid="test-error" title={when}>
      {test.status ? t('channels.errorWithStatus', { status: test.status, error: test.error ?? '' }) : (test.error ?? '')}
    </span>
  );
}

function DisabledInfo({
  disabled: d,
  channelName,
  enabling,
  onEnable,
}: {
  disabled: PublicDisabledModel;
  channelName: string;
  enabling: boolean;
  onEnable: () => void;
}) {
  const { t, lang } = useLang();
  return (
    <div className="ch-disabled">
      <span className="ch-small">{t('channels.disabledSince', { time: formatTime(d.disabled_at, lang) })}</span>
      <span className="ch-small">{d.retest_at === null ? t('channels.noRetest') : t('channels.retestAt', { time: formatClock(d.retest_at, lang) })}</span>
      <details>
        <summary>
          <span>{t('channels.why', { n: d.failures.length })}</span>
        </summary>
        {d.failures.length === 0 ? (
          <p className="ch-small ch-error-text">
            <span>{d.reason}</span>
          </p>
        ) : (
          <ol className="ch-failures">
            {d.failures.map((f, i) => (
              <li key={i} className="ch-small">
                <span className="muted">{formatClock(f.at, lang)}</span>
                <span className="ch-error-text">{f.error}</span>
              </li>
            ))}
          </ol>
        )}
      </details>
      <button
        type="button"
        className="secondary ch-enable"
        disabled={enabling}
        aria-label={t('channels.enableModelNamed', { model: d.model, name: channelName })}
        onClick={onEnable}
      >
        <span>{t('channels.enableModel')}</span>
      </button>
    </div>
  );
}
