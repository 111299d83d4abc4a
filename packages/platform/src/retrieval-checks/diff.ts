// The difference between a run and the one before it, per check: what newly
// fails comes first, then what newly passes, then every rank that moved.
import type { CheckChange, RankChange, CheckDiff, RunDiff } from '@kbchat/contracts';
import type { CheckResult } from './evaluate.js';

export type { CheckChange, RankChange, CheckDiff, RunDiff };

export interface RunSnapshot {
  id: string;
  startedAt?: number;
  vectorModel: string;
  chunking: { fingerprint: string };
  results: CheckResult[];
}

const ORDER: CheckChange[] = ['newlyFailing', 'newlyPassing', 'stillFailing', 'new', 'stillPassing'];

export function diffRuns(run: RunSnapshot, previous: RunSnapshot | undefined): RunDiff {
  const before = new Map((previous?.results ?? []).map((r) => [r.checkId, r]));
  const checks = run.results.map((r): CheckDiff => {
    const old = before.get(r.checkId);
    if (!old) return { checkId: r.checkId, question: r.question, change: 'new', passed: r.passed, edited: false, rankChanges: [] };
    const change: CheckChange = r.passed === old.passed ? (r.passed ? 'stillPassing' : 'stillFailing') : r.passed ? 'newlyPassing' : 'newlyFailing';
    const edited = JSON.stringify(old.expected) !== JSON.stringify(r.expected);
    const rankChanges = edited
      ? []
      : r.expectations.flatMap((e, index): RankChange[] => {
          const was = old.expectations[index]?.rank ?? null;
          return was === e.rank ? [] : [{ index, expectation: r.expected[index]!, before: was, after: e.rank, lost: was !== null && e.rank === null }];
        });
    return { checkId: r.checkId, question: r.question, change, passed: r.passed, edited, rankChanges };
  });
  // Within a kind, the checks that moved come before those that did not.
  checks.sort((a, b) => ORDER.indexOf(a.change) - ORDER.indexOf(b.change) || Number(b.rankChanges.length > 0) - Number(a.rankChanges.length > 0));
  const counts = Object.fromEntries(ORDER.map((c) => [c, checks.filter((x) => x.change === c).length])) as Record<CheckChange, number>;
  const current = new Set(run.results.map((r) => r.checkId));
  return {
    previousRunId: previous?.id ?? null,
    previousStartedAt: previous?.startedAt ?? null,
    vectorModelChanged: previous && previous.vectorModel !== run.vectorModel ? { before: previous.vectorModel, after: run.vectorModel } : null,
    chunkingChanged: !!previous && previous.chunking.fingerprint !== run.chunking.fingerprint,
    counts,
    checks,
    removed: (previous?.results ?? []).filter((r) => !current.has(r.checkId)).map((r) => ({ checkId: r.checkId, question: r.question })),
  };
}
