// A new tool source: an MCP server by its address, or an HTTP API by its
// OpenAPI document (fetched from an address or pasted) with an optional base
// URL; and headers as name/value rows. The platform connects and lists the
// tools before it keeps the source, so adding can take a few seconds, and a
// source it cannot reach is refused in its own words.
import type { CreateToolSourceBody } from '@kbchat/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { ActionError } from '../actions';
import { api } from '../api';
import { useLang } from '../i18n';
import { TOOLS } from './queries';

type SourceType = CreateToolSourceBody['type'];
interface HeaderRow {
  key: number;
  name: string;
  value: string;
}

let nextRow = 0;
const emptyRow = (): HeaderRow => ({ key: nextRow++, name: '', value: '' });

export function AddSource({ onCreated }: { onCreated: (id: string) => void }) {
  const { t } = useLang();
  const id = useId();
  const client = useQueryClient();
  const [type, setType] = useState<SourceType>('mcp');
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [pasted, setPasted] = useState(false);
  const [documentText, setDocumentText] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [headers, setHeaders] = useState<HeaderRow[]>([]);
  const [problem, setProblem] = useState('');
  const create = useMutation({
    mutationFn: (json: CreateToolSourceBody) => api<string>('/api/core/tool/source/create', { json }),
    onSuccess: (created) => {
      // The values typed (a header's secret above all) are not kept in the page once saved.
      setName('');
      setUrl('');
      setDocumentText('');
      setBaseUrl('');
      setHeaders([]);
      void client.invalidateQueries({ queryKey: TOOLS, exact: true });
      onCreated(created);
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    setProblem('');
    // A row left wholly empty is no header; one with a name and no value is the platform's to judge.
    const rows = headers.filter((h) => h.name.trim() || h.value);
    const names = rows.map((h) => h.name.trim().toLowerCase());
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice !== undefined) return setProblem(t('tools.add.duplicateHeader', { name: twice }));
    const sent = rows.length ? Object.fromEntries(rows.map((h) => [h.name.trim(), h.value])) : undefined;
    const openapi = type === 'openapi';
    create.mutate({
      type,
      name: name.trim(),
      url: !openapi || !pasted ? url.trim() : undefined,
      document: openapi && pasted ? documentText : undefined,
      baseUrl: openapi && baseUrl.trim() ? baseUrl.trim() : undefined,
      headers: sent,
    });
  }

  const setRow = (key: number, patch: Partial<HeaderRow>) => setHeaders((rows) => rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const busy = create.isPending;
  return (
    <form className="card stack tl-form" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{t('tools.add.title')}</h2>
      <fieldset className="tl-choice">
        <legend>
          <span>{t('tools.type')}</span>
        </legend>
        {(['mcp', 'openapi'] as const).map((v) => (
          <label key={v} className="tl-inline">
            <input type="radio" name={`${id}-type`} checked={type === v} onChange={() => setType(v)} />
            <span>{t(v === 'mcp' ? 'tools.add.mcp' : 'tools.add.openapi')}</span>
          </label>
        ))}
      </fieldset>
      <label>
        <span>{t('common.name')}</span>
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      </label>
      {type === 'openapi' && (
        <fieldset className="tl-choice">
          <legend>
            <span>{t('tools.add.documentFrom')}</span>
          </legend>
          <label className="tl-inline">
            <input type="radio" name={`${id}-from`} checked={!pasted} onChange={() => setPasted(false)} />
            <span>{t('tools.add.byUrl')}</span>
          </label>
          <label className="tl-inline">
            <input type="radio" name={`${id}-from`} checked={pasted} onChange={() => setPasted(true)} />
            <span>{t('tools.add.pasted')}</span>
          </label>
        </fieldset>
      )}
      {type === 'mcp' || !pasted ? (
        <div className="tl-field">
          <label htmlFor={`${id}-url`}>
            <span>{t(type === 'mcp' ? 'tools.add.mcpUrl' : 'tools.add.documentUrl')}</span>
          </label>
          <input
            id={`${id}-url`}
            type="url"
            inputMode="url"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            required
            maxLength={2000}
            placeholder="https://"
            aria-describedby={type === 'mcp' ? `${id}-url-hint` : undefined}
          />
          {type === 'mcp' && (
            <div id={`${id}-url-hint`} className="muted tl-hint">
              <span>{t('tools.add.mcpUrlHint')}</span>
            </div>
          )}
        </div>
      ) : (
        <div className="tl-field">
          <label htmlFor={`${id}-doc`}>
            <span>{t('tools.add.document')}</span>
          </label>
          <textarea
            id={`${id}-doc`}
            className="tl-code"
            value={documentText}
            onChange={(e) => setDocumentText(e.target.value)}
            required
            rows={8}
            spellCheck={false}
          />
        </div>
      )}
      {type === 'openapi' && (
        <div className="tl-field">
          <label htmlFor={`${id}-base`}>
            <span>{t('tools.add.baseUrl')}</span>
          </label>
          <input
            id={`${id}-base`}
            type="url"
            inputMode="url"
            value={baseUrl}
            onChange={(e) => setBaseUrl(e.target.value)}
            maxLength={2000}
            aria-describedby={`${id}-base-hint`}
          />
          <div id={`${id}-base-hint`} className="muted tl-hint">
            <span>{t('tools.add.baseUrlHint')}</span>
          </div>
        </div>
      )}
      <fieldset className="stack tl-headers" aria-describedby={`${id}-headers-hint`}>
        <legend>
          <span>{t('tools.add.headers')}</span>
        </legend>
        <p id={`${id}-headers-hint`} className="muted tl-hint">
          <span>{t('tools.add.headersHint')}</span>
        </p>
        {headers.map((h, i) => (
          <div key={h.key} className="tl-header-row" role="group" aria-label={t('tools.add.headerRow', { n: i + 1 })}>
            <label>
              <span>{t('tools.add.headerName')}</span>
              <input value={h.name} onChange={(e) => setRow(h.key, { name: e.target.value })} placeholder="Authorization" maxLength={100} spellCheck={false} />
            </label>
            <label>
              <span>{t('tools.add.headerValue')}</span>
              {/* A secret: typed hidden, and no browser offers to remember it as a password. */}
              <input type="password" value={h.value} onChange={(e) => setRow(h.key, { value: e.target.value })} autoComplete="new-password" maxLength={8000} />
            </label>
            <button
              type="button"
              className="secondary"
              aria-label={t('tools.add.removeHeader', { n: i + 1 })}
              onClick={() => setHeaders((rows) => rows.filter((r) => r.key !== h.key))}
            >
              <span aria-hidden="true">✕</span>
            </button>
          </div>
        ))}
        <div>
          <button type="button" className="secondary" onClick={() => setHeaders((rows) => [...rows, emptyRow()])}>
            <span>{t('tools.add.addHeader')}</span>
          </button>
        </div>
      </fieldset>
      <p className="notice tl-hint">
        <span>{t('tools.add.private')}</span>
      </p>
      <div className="row">
        <button type="submit" disabled={busy || !name.trim()}>
          <span>{busy ? t('tools.add.busy') : t('tools.add.submit')}</span>
        </button>
      </div>
      {problem && (
        <p role="alert" className="error">
          <span>{problem}</span>
        </p>
      )}
      <ActionError error={create.error} />
    </form>
  );
}
