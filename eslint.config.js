// One linter for the whole repository: coordinator, node-agent, common, the studio, bench, scripts
// and tests. Type-aware rules (projectService reads each file's own tsconfig) catch the promise
// mistakes that type-check; formatting is Prettier's alone (eslint-config-prettier turns off the
// rules it owns). `npm run lint` also checks formatting and import cycles.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'data/**', 'models/**', 'common/src/generated/**', 'common/src/openapi/generated.ts', '**/node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        // scripts/ has a tsconfig of its own (its .mjs files are JavaScript, linted with types).
        projectService: { allowDefaultProject: ['eslint.config.js', 'coordinator/studio/vite.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // A `let` read in a callback before its one assignment cannot become a const (TDZ).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  { files: ['coordinator/studio/src/**'], languageOptions: { globals: { ...globals.browser } } },
  prettier,
);
