// The words of an import's estimate that depend on time: how long ago its
// speed was measured, and on what (this file's own sample, an earlier
// upload's, or the workers' indexing), so that the page never says "just now"
// of an old measurement or "this file" of another's.
import type { UploadEstimate } from '../api';
import type { Translate } from '../i18n';

/** How long ago, as people say it: "just now", "3 min ago", "2 h ago", "3 days ago". */
export function ago(seconds: number, t: Translate): string {
  if (seconds < 60) return t('datasets.ago.now');
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return t('datasets.ago.minutes', { m: minutes });
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? t('datasets.ago.hours', { h: hours }) : t('datasets.ago.days', { d: Math.floor(hours / 24) });
}

/** What measured the estimate's speed, and when: this file's own sample, an earlier upload's, or the workers' indexing. */
export function rateOrigin(e: Pick<UploadEstimate, 'rateSource' | 'rateFromThisFile' | 'rateAgeSeconds'>, secondsSince: number, t: Translate): string {
  const when = { ago: ago((e.rateAgeSeconds ?? 0) + secondsSince, t) };
  if (e.rateSource === 'probe') return t(e.rateFromThisFile ? 'datasets.upload.rate.thisFile' : 'datasets.upload.rate.probe', when);
  return t('datasets.upload.rate.measured', when);
}
