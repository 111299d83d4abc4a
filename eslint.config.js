// ESLint for the whole repository: typescript-eslint's recommended rules
// everywhere, React's rules of hooks in the web app. `npm run lint` runs it,
// then oxlint for import cycles (.oxlintrc.json: its import/no-cycle counts
// type-only imports, which eslint-plugin-import-x's skips, and a cycle of types
// is still two files that cannot be read apart), then Prettier's check.
// Not type-aware: the typed rules took four times as long on this code.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['**/dist/', '**/data/', '**/.data-test/', '**/coverage/', '**/test-output/', '.optional/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // 562 uses: JSON bodies in tests, Kysely<any> until each service has one typed database (#28).
      '@typescript-eslint/no-explicit-any': 'off',
      // The hot loops (hnsw.ts, fulltext-index.ts) join assignments with commas on purpose.
      '@typescript-eslint/no-unused-expressions': 'off',
      // A leading underscore names what is dropped on purpose (`const { usage: _drop, ...rest }`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Its functions run in the page, through playwright-core's evaluate.
    files: ['packages/web/bench/**', 'packages/e2e/bench/**'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  {
    files: ['packages/web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: globals.browser },
    plugins: { 'react-hooks': reactHooks },
    // The two rules of hooks only: the plugin's React Compiler rules (refs,
    // purity, set-state-in-effect...) check what that compiler needs, the app
    // is not compiled by it, and they took 45 s of the lint's 60.
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // The HTTP/1.1 transport knows nothing of relaying, billing or channels.
    files: ['packages/gateway/src/http1/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['../*'], message: 'http1/ imports only http1/.' }] }] },
  },
);
