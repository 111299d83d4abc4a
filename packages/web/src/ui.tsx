// The few pieces every page uses: a boundary per page and widget (the queries
// below it throw their failures into it), paging, tables, copy, and formatting.
// Text that changes is always inside its own element (a <span>), so that a
// page translator's <font> wrappers never stand where React expects a text node.
import { QueryErrorResetBoundary } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { ErrorBoundary } from './ErrorBoundary';
import { useLang } from './i18n';

/** One error boundary, with the messages in the reader's language; `resetKey` (a page's address) clears its error when it changes. */
export function Boundary({ children, resetKey }: { children: ReactNode; resetKey?: string }) {
  const { t } = useLang();
  return (
    <QueryErrorResetBoundary>
      {({ reset }) => (
        <ErrorBoundary title={t('error.title')} retry={t('error.retry')} notFoundTitle={t('error.notFoundTitle')} resetKey={resetKey} onReset={reset}>
          {children}
        </ErrorBoundary>
      )}
    </QueryErrorResetBoundary>
  );
}

/** A page the app does not have (the last route of a Switch). */
export function NotFound() {
  const { t } = useLang();
  return (
    <p role="alert">
      <span>{t('error.notFound')}</span>
    </p>
  );
}

export function Loading() {
  const { t } = useLang();
  return (
    <p className="muted" aria-busy="true">
      <span>{t('common.loading')}</span>
    </p>
  );
}

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const { t } = useLang();
  const [copied, setCopied] = useState(false);
  async function copy() {
    await copyText(text);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  }
  return (
    <button type="button" className="secondary" onClick={copy}>
      <span>{copied ? t('common.copied') : (label ?? t('common.copy'))}</span>
    </button>
  );
}

/** A secret from a create answer, shown this once with a copy button (nothing can show it again). */
export function SecretShownOnce({ secret, message, onClose }: { secret: string; message: string; onClose: () => void }) {
  const { t } = useLang();
  return (
    <div className="notice" role="status">
      <p>
        <span>{message}</span>
      </p>
      <div className="row">
        <code className="secret" data-testid="new-key">
          {secret}
        </code>
        <CopyButton text={secret} />
        <button type="button" className="link" onClick={onClose}>
          <span>{t('common.close')}</span>
        </button>
      </div>
    </div>
  );
}

/** The clipboard API where the page may use it (https or loopback), else a hidden textarea. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    document.body.appendChild(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
}

/** Server-side paging: offset/pageSize in, total from the answer. */
export function Pager({ offset, pageSize, total, onOffset }: { offset: number; pageSize: number; total: number; onOffset: (offset: number) => void }) {
  const { t } = useLang();
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const page = Math.floor(offset / pageSize) + 1;
  if (pages <= 1) return null;
  return (
    <nav className="pager">
      <button type="button" className="secondary" disabled={page <= 1} onClick={() => onOffset(offset - pageSize)}>
        <span>{t('common.previous')}</span>
      </button>
      <span className="muted">{t('common.pageOf', { page, pages })}</span>
      <button type="button" className="secondary" disabled={page >= pages} onClick={() => onOffset(offset + pageSize)}>
        <span>{t('common.next')}</span>
      </button>
    </nav>
  );
}

export interface Column<T> {
  header: ReactNode;
  cell: (row: T) => ReactNode;
}

/** A table of rows, one cell per column, scrolling sideways on a narrow screen. */
export function Table<T>({
  rows,
  columns,
  rowKey,
  rowClass,
  className,
}: {
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => string;
  rowClass?: (row: T) => string | undefined;
  className?: string;
}) {
  return (
    <div className={className ? `table-wrap ${className}` : 'table-wrap'}>
      <table>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i}>{c.header}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} className={rowClass?.(row)}>
              {columns.map((c, i) => (
                <td key={i}>{c.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function formatTime(iso: string | number | undefined, lang: string): string {
  if (iso === undefined) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-US', { dateStyle: 'medium', timeStyle: 'short' });
}

/** A time soon to come as a clock reading (seconds count for a short wait); another day's with its date. */
export function formatClock(iso: string | number, lang: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  if (d.toDateString() !== new Date().toDateString()) return formatTime(iso, lang);
  return d.toLocaleTimeString(lang === 'zh' ? 'zh-CN' : 'en-US', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** Where a quote stands in its document (a PDF's pages, a spreadsheet's rows), for beside its source's name; nothing when unknown. */
export function SourcePages({ pages, rows }: { pages?: [number, number]; rows?: [number, number] }) {
  const { t } = useLang();
  if (!pages && !rows) return null;
  return (
    <>
      {pages && (
        <>
          <span> · </span>
          <span>{pages[0] === pages[1] ? t('source.page', { n: pages[0] }) : t('source.pages', { from: pages[0], to: pages[1] })}</span>
        </>
      )}
      {rows && (
        <>
          <span> · </span>
          <span>{rows[0] === rows[1] ? t('source.row', { n: rows[0] }) : t('source.rows', { from: rows[0], to: rows[1] })}</span>
        </>
      )}
    </>
  );
}
