// A share link's settings as its forms hold them (text, as typed), and the
// bodies they send: create sends only what is filled in; an edit sends every
// limit, null for an emptied one (the platform then clears it), except the
// expiry, sent only when changed (an unchanged past date would be refused).
import type { CreateOutLinkBody, PublicOutLink, UpdateOutLinkBody } from '@kbchat/contracts';

export interface LinkFields {
  name: string;
  /** YYYY-MM-DD (a date input's value), the end of that day here. */
  expires: string;
  qpm: string;
  linkQpm: string;
  maxUsagePoints: string;
  hookUrl: string;
  /** One origin per line. */
  origins: string;
}

export const EMPTY_FIELDS: LinkFields = { name: '', expires: '', qpm: '', linkQpm: '', maxUsagePoints: '', hookUrl: '', origins: '' };

const pad = (n: number) => String(n).padStart(2, '0');

/** A stored expiry as the date input shows it (the day here). */
export function dateInput(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export function fieldsOf(link: PublicOutLink): LinkFields {
  const l = link.limit;
  return {
    name: link.name,
    expires: dateInput(l.expiredTime),
    qpm: l.QPM === undefined ? '' : String(l.QPM),
    linkQpm: l.linkQPM === undefined ? '' : String(l.linkQPM),
    maxUsagePoints: l.maxUsagePoints === undefined ? '' : String(l.maxUsagePoints),
    hookUrl: l.hookUrl ?? '',
    origins: link.allowedOrigins.join('\n'),
  };
}

const number = (s: string) => (s.trim() ? Number(s) : undefined);
const text = (s: string) => s.trim() || undefined;
const endOfDay = (date: string) => (date ? new Date(`${date}T23:59:59`).getTime() : undefined);
export const originList = (s: string) =>
  s
    .split(/\r?\n/)
    .map((o) => o.trim())
    .filter(Boolean);

/** Only what is filled in. */
export function createBody(appId: string, f: LinkFields): CreateOutLinkBody {
  const limit = {
    expiredTime: endOfDay(f.expires),
    QPM: number(f.qpm),
    linkQPM: number(f.linkQpm),
    maxUsagePoints: number(f.maxUsagePoints),
    hookUrl: text(f.hookUrl),
  };
  const origins = originList(f.origins);
  return { appId, name: f.name.trim(), limit, ...(origins.length ? { allowedOrigins: origins } : {}) };
}

/** Every limit (null: cleared), the expiry only when it changed; `was` is what the form started from. */
export function updateBody(id: string, f: LinkFields, was: LinkFields): UpdateOutLinkBody {
  return {
    id,
    name: f.name.trim(),
    limit: {
      ...(f.expires !== was.expires ? { expiredTime: endOfDay(f.expires) ?? null } : {}),
      QPM: number(f.qpm) ?? null,
      linkQPM: number(f.linkQpm) ?? null,
      maxUsagePoints: number(f.maxUsagePoints) ?? null,
      hookUrl: text(f.hookUrl) ?? null,
    },
    allowedOrigins: originList(f.origins),
  };
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The share page's address on this platform. */
export const sharePageUrl = (origin: string, shareId: string) => `${origin}/chat/share?shareId=${encodeURIComponent(shareId)}`;

/** The embed script's tag: a chat bubble in a corner of the operator's page. */
export const scriptSnippet = (origin: string, shareId: string) =>
  `<script src="${escapeAttr(`${origin}/embed.js`)}" data-share-id="${escapeAttr(shareId)}" defer></script>`;

/** The share page in a frame of the operator's page. */
export const iframeSnippet = (origin: string, shareId: string, title: string) =>
  `<iframe src="${escapeAttr(sharePageUrl(origin, shareId))}" title="${escapeAttr(title)}" style="width:100%;height:600px;border:0" allow="clipboard-write"></iframe>`;
