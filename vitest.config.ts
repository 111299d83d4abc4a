import { defineConfig } from 'vitest/config';

/**
 * Files that need a module graph of their own: they mock modules (vi.mock
 * replaces a module only where it is loaded fresh), set process.env, or
 * render React in jsdom. Every other file shares its worker's modules with
 * the files before it (isolate: false), which saves a third of the suite's
 * CPU: the services' sources are loaded once per worker, not once per file.
 */
const ISOLATED = [
  'packages/gateway/test/openapi.test.ts',
  'packages/platform/test/openapi.test.ts',
  'packages/local-models/test/embed-priority.test.ts',
  'packages/web/test/**/*.test.{ts,tsx}',
];

// Tests import workspace packages from their TypeScript sources (the "source"
// export condition), so a test run never depends on a stale dist/.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits up to 10 s, not vitest's 1 s: on a loaded 2-core machine a
    // page or a background write can take longer than a second, and a poll that
    // gives up early is a flaky test, not a finding.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // Two files at a time: vitest's own default is one fewer than the cores,
    // which is one file at a time on a 2-core machine, while most files wait on
    // servers, databases and Chromium rather than on the CPU.
    maxWorkers: 2,
    // An answer that breaks its route's declared schema is a 500 here (server-kit's answer-check.ts).
    env: { KBCHAT_STRICT_ANSWERS: '1' },
    // eventsource-parser (the MCP SDK's client reads streams with it) also exports a "source" condition,
    // its TypeScript: loaded through Vite, not by Node, which cannot import a .ts file from node_modules.
    server: { deps: { inline: ['@modelcontextprotocol/sdk', 'eventsource-parser'] } },
    // One initdb for the whole run: every PGlite store copies its result (PGLITE_TEMPLATE).
    globalSetup: ['packages/shared/test/pglite-template.setup.ts'],
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['packages/*/test/**/*.test.ts', 'packages/*/test/**/*.test.tsx'],
          exclude: ISOLATED,
          isolate: false,
        },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
