// Where the chunker cuts text that must be split (issue 16's audit: a list
// item of docs/architecture.md cut at 100 tokens mid-sentence, "so its
// ~450 MB" | "MB go with it"): at a sentence end, else, for a sentence longer
// than a chunk, at a clause (a comma, semicolon or colon), never after an
// abbreviation; the next chunk's overlap is whole clauses where they fit.
import { describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../src/ingest/index.js';

// The PGlite item of docs/architecture.md, unwrapped as the readers store it: its second sentence is longer than a 100-token chunk.
const PGLITE_ITEM =
  "- **PGlite memory.** 16 MB of shared buffers for the gateway (32 MB for the platform), and a new data dir is created (initdb) in a short-lived child process, so its ~450 MB go with it (in-process, or even in a worker thread, much of it stayed resident): `kbchat start` with both stores and the local models loaded rested at about 400 MB and stayed under 550 MB while embedding; the gateway store's own thread (a second V8 isolate) adds about 60 MB at rest (measured 2026-11-23: 398-410 MB in-process, 455-475 MB on the thread).";

describe('cutting over-long text at sentences and clauses', () => {
  it('cuts a sentence longer than a chunk at a clause, and carries whole clauses as overlap', async () => {
    const markdown = `# kbchat architecture\n\n## Decisions worth knowing\n\n- **Embedding next to relaying.** The embedding worker thread runs at SCHED_IDLE (or nice 19).\n${PGLITE_ITEM}\n- **Memory over a long run.** The embedding worker runs the model on at most 8 texts at a time.\n`;
    const chunks = await chunkMarkdown(markdown, { chunkSize: 100 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.tokens).toBeLessThanOrEqual(100);
      // Every chunk ends at a sentence end or a clause end, not inside a clause.
      expect(c.text.trimEnd(), c.text).toMatch(/[.!?)]$|[,;:]$/);
      // The overlap is the previous chunk's last clause when it fits (12 tokens here).
      if (c.overlap) expect(chunks[c.index - 1]!.text.endsWith(c.overlap)).toBe(true);
    }
    expect(chunks.some((c) => c.text.trimEnd().endsWith('~450 MB'))).toBe(false);
    expect(chunks[1]!.overlap).toBe('so its ~450 MB go with it (in-process,');
  });

  it('does not end a chunk after an abbreviation, and reads a line break inside a sentence as a space', async () => {
    const first =
      'Visitors who stay for more than a week should bring clothes for wet and cold weather and for the long evenings on the shore, e.g. a warm fleece jacket, woollen socks, gloves and a hat that keeps the ears warm in the wind.';
    const second = 'The station lends out rubber boots in most sizes, and rain clothes can be borrowed from the caretaker on the day of arrival.';
    const chunks = await chunkMarkdown(`${first} ${second}`, { chunkSize: 60, overlap: 0, prefixTitle: false });
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.text.trimEnd()).not.toMatch(/e\.g\.$/);
    // A hard-wrapped paragraph is cut at its sentences, not at its line ends.
    const wrapped =
      'The boats are kept in the\nboathouse by the jetty. Only visitors who passed the\nboat test may take one out alone. Life jackets must be worn on the water at all\ntimes, also in calm weather.';
    const pieces = await chunkMarkdown(wrapped, { chunkSize: 24, overlap: 0, prefixTitle: false });
    for (const c of pieces) expect(c.text.trimEnd()).toMatch(/[.,]$/);
  });
});
