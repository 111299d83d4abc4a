// Why a file was not imported, in the user's words rather than the API's
// ("Invalid 'filename': …"), and whether trying again can help: a file of a
// type no reader takes, too large, unreadable or without text fails the same
// way every time (and the platform has discarded its upload); a dropped
// connection, a busy or failing server, or bytes still missing may not.
import { ApiError } from '../api';
import type { MessageKey } from '../i18n';

export interface UploadProblem {
  /** What to say; `vars` fill it. */
  key: MessageKey | null;
  vars?: Record<string, string | number>;
  /** The platform's own words, shown beneath (or alone, when there is no key). */
  detail?: string;
  /** A retry could go differently. */
  retry: boolean;
}

/** The ingest refusals of a file's content (IngestError codes): none of them changes on a retry. */
const CONTENT: Record<string, MessageKey> = {
  unsupported_file_type: 'datasets.upload.error.type',
  file_too_large: 'datasets.upload.error.tooLarge',
  too_many_pages: 'datasets.upload.error.tooManyPages',
  corrupt_file: 'datasets.upload.error.unreadable',
  encrypted_file: 'datasets.upload.error.encrypted',
  parse_timeout: 'datasets.upload.error.slow',
  empty_document: 'datasets.upload.error.empty',
  too_complex: 'datasets.upload.error.complex',
};

/** The field an envelope message names ("Invalid 'filename': …"), and the rest of it. */
function invalidField(message: string): { field: string; rest: string } | undefined {
  const m = /^Invalid '([^']+)': (.*)$/s.exec(message);
  return m ? { field: m[1]!, rest: m[2]! } : undefined;
}

export function uploadProblem(err: unknown, file: { name: string }, maxBytes: string): UploadProblem {
  if (!(err instanceof ApiError)) return { key: null, detail: (err as Error)?.message || String(err), retry: true };
  if (err.status === 0) return { key: 'error.network', retry: true };
  const ext = /\.([^./\\]+)$/.exec(file.name)?.[1]?.toLowerCase();
  const field = invalidField(err.message);
  const content = err.code ? CONTENT[err.code] : undefined;
  if (content === 'datasets.upload.error.type' || field?.field === 'filename') {
    return { key: ext ? 'datasets.upload.error.type' : 'datasets.upload.error.typeNoExt', vars: { ext: ext ?? '' }, retry: false };
  }
  if ((err.status === 413 && !content) || content === 'datasets.upload.error.tooLarge')
    return { key: 'datasets.upload.error.tooLarge', vars: { max: maxBytes }, retry: false };
  if (content) return { key: content, detail: err.message, retry: false };
  // Busy, failing or not there yet (a 409: bytes still missing): another try may go through.
  if (err.status === 408 || err.status === 409 || err.status === 429 || err.status >= 500) return { key: null, detail: err.message, retry: true };
  // Any other refusal names a setting or a field: the words say which, and a retry as it is fails the same.
  return { key: field ? 'datasets.upload.error.refused' : null, detail: field ? field.rest : err.message, retry: false };
}
