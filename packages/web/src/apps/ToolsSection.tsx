// The tools the application's model may call, picked from the team's tool
// sources (one group of checkboxes per source, at most MAX_TOOLS in all), and
// the most rounds of calls in one answer. A tool the app names that is gone
// (its source deleted, or no longer listed after a refresh) stays shown,
// checked, so that it can be taken out, as DatasetPicker does with a deleted
// knowledge base. The sources are read here, not with the page's other data:
// the Tools page keeps the same queries fresh.
import { useQueries } from '@tanstack/react-query';
import { useId } from 'react';
import { Link } from 'wouter';
import type { ToolSourceDetail } from '../api';
import { useLang } from '../i18n';
import { Loading } from '../ui';
import { loadToolSource, toolSourceKey, useToolSources } from '../tools/queries';
import { MAX_TOOLS, type ToolRef } from './draft';
import { NumberField } from './fields';
import type { SectionProps } from './section-props';

const same = (a: ToolRef, b: ToolRef) => a.sourceId === b.sourceId && a.name === b.name;

export function ToolsSection({ draft, change, invalid }: Pick<SectionProps, 'draft' | 'change' | 'invalid'>) {
  const { t } = useLang();
  const picked = draft.tools;
  return (
    <section className={`card stack ap-section${invalid ? ' ap-invalid' : ''}`} aria-labelledby="ap-tools">
      <div className="row ap-tools-head">
        <h2 id="ap-tools">{t('apps.section.tools')}</h2>
        <span className="badge">
          <span>{t('apps.tools.picked', { n: picked.length, max: MAX_TOOLS })}</span>
        </span>
        <Link href="~/tools">
          <span>{t('apps.tools.manage')}</span>
        </Link>
      </div>
      <p className="muted ap-note">
        <span>{t('apps.tools.lead', { max: MAX_TOOLS })}</span>
      </p>
      <ToolPicker value={picked} onChange={(tools) => change({ tools })} />
      <div className="ap-grid2">
        <NumberField
          label={t('apps.toolRounds')}
          value={draft.toolRounds}
          onChange={(toolRounds) => change({ toolRounds: toolRounds ?? Number.NaN })}
          min={1}
          max={10}
          step={1}
          hint={<span>{t('apps.toolRounds.hint')}</span>}
        />
      </div>
    </section>
  );
}

function ToolPicker({ value, onChange }: { value: ToolRef[]; onChange: (tools: ToolRef[]) => void }) {
  const { t } = useLang();
  const { data: list } = useToolSources();
  const sources = useQueries({
    queries: (list ?? []).map((s) => ({ queryKey: toolSourceKey(s.id), queryFn: ({ signal }: { signal: AbortSignal }) => loadToolSource(s.id, signal) })),
    combine: (results) => (results.every((r) => r.data) ? results.map((r) => r.data!) : undefined),
  });
  if (!list || !sources) return <Loading />;

  const full = value.length >= MAX_TOOLS;
  const toggle = (ref: ToolRef, on: boolean) => onChange(on ? [...value, ref] : value.filter((x) => !same(x, ref)));
  const missing = value.filter((ref) => !sources.some((s) => s.id === ref.sourceId && s.tools.some((tool) => tool.name === ref.name)));
  return (
    <>
      {sources.length === 0 && (
        <p className="muted row">
          <span>{t('apps.tools.none')}</span>
          <Link href="~/tools">
            <span>{t('apps.tools.add')}</span>
          </Link>
        </p>
      )}
      {sources.map((s) => (
        <SourceGroup key={s.id} source={s} value={value} full={full} toggle={toggle} />
      ))}
      {missing.length > 0 && (
        <fieldset className="ap-tools-group" aria-describedby="ap-tools-missing">
          <legend>
            <span>{t('apps.tools.missingTitle')}</span>
          </legend>
          <p id="ap-tools-missing" className="notice warn ap-note">
            <span>{t('apps.tools.missingHint')}</span>
          </p>
          <ul className="ap-checklist">
            {missing.map((ref) => {
              const source = sources.find((s) => s.id === ref.sourceId);
              return (
                <li key={`${ref.sourceId}/${ref.name}`}>
                  <label className="ap-inline">
                    <input type="checkbox" checked onChange={() => toggle(ref, false)} />
                    <span>{source ? t('apps.tools.notListed', { name: ref.name, source: source.name }) : t('apps.tools.sourceGone', { name: ref.name })}</span>
                  </label>
                </li>
              );
            })}
          </ul>
        </fieldset>
      )}
      {full && (
        <p className="notice ap-note">
          <span>{t('apps.tools.full', { max: MAX_TOOLS })}</span>
        </p>
      )}
    </>
  );
}

function SourceGroup({
  source,
  value,
  full,
  toggle,
}: {
  source: ToolSourceDetail;
  value: ToolRef[];
  full: boolean;
  toggle: (ref: ToolRef, on: boolean) => void;
}) {
  const { t } = useLang();
  const id = useId();
  return (
    <fieldset className="ap-tools-group">
      <legend>
        <span className="ap-name">{source.name}</span>
      </legend>
      {source.tools.length === 0 ? (
        <p className="muted ap-note">
          <span>{t('apps.tools.sourceEmpty')}</span>
        </p>
      ) : (
        <ul className="ap-checklist ap-tools">
          {source.tools.map((tool, i) => {
            const ref = { sourceId: source.id, name: tool.name };
            const checked = value.some((x) => same(x, ref));
            return (
              <li key={tool.name}>
                <label className="ap-inline">
                  <input
                    type="checkbox"
                    checked={checked}
                    disabled={!checked && full}
                    aria-describedby={tool.description ? `${id}-${i}` : undefined}
                    onChange={(e) => toggle(ref, e.target.checked)}
                  />
                  <code>{tool.name}</code>
                </label>
                {tool.description && (
                  <span id={`${id}-${i}`} className="muted ap-small ap-tool-description">
                    {tool.description}
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </fieldset>
  );
}
