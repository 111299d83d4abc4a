// The report: a table a person reads (coloured on a terminal, unless
// NO_COLOR), or one JSON document.
import type { Check, Status } from './check.js';

const LABEL: Record<Status, string> = { ok: 'OK', warn: 'WARN', fail: 'FAIL', skip: 'SKIP' };
const COLOUR: Record<Status, string> = { ok: '32', warn: '33', fail: '31', skip: '90' };

export function passed(checks: Check[]): boolean {
  return !checks.some((c) => c.status === 'fail');
}

export function toJson(checks: Check[]): string {
  return JSON.stringify({ ok: passed(checks), checks }, null, 2);
}

/** One line per check (STATUS, CHECK, MODEL, DETAIL), its remedy indented below it, then the counts. */
export function toTable(checks: Check[], colour: boolean): string {
  const paint = (code: string, text: string) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);
  const nameWidth = Math.max(5, ...checks.map((c) => c.name.length));
  const modelWidth = Math.max(5, ...checks.map((c) => (c.model ?? '').length));
  const lines = [paint('1', `${'STATUS'.padEnd(6)}  ${'CHECK'.padEnd(nameWidth)}  ${'MODEL'.padEnd(modelWidth)}  DETAIL`)];
  for (const c of checks) {
    lines.push(`${paint(COLOUR[c.status], LABEL[c.status].padEnd(6))}  ${c.name.padEnd(nameWidth)}  ${(c.model ?? '').padEnd(modelWidth)}  ${c.detail}`);
    if (c.remedy) lines.push(`${' '.repeat(8)}${paint('36', '-> fix:')} ${c.remedy}`);
  }
  const count = (s: Status) => checks.filter((c) => c.status === s).length;
  lines.push('', `${checks.length} checks: ${count('ok')} ok, ${count('warn')} warnings, ${count('fail')} failed, ${count('skip')} skipped`);
  return lines.join('\n');
}
