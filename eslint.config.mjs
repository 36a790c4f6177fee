// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

/**
 * Lint run by `npm test` after tsc. Enforced: ESLint's and typescript-eslint's recommended rules,
 * plus the type-aware promise rules: `no-floating-promises` (a promise neither awaited nor
 * handled; mark a deliberate fire-and-forget with `void`) and `no-misused-promises` (a promise
 * handed where a void callback is expected, so its rejection goes nowhere). Unused names that
 * start with `_` are deliberate (fields dropped by destructuring). Formatting is Prettier's job
 * (`npm run format`), not the linter's.
 */
export default tseslint.config(
  {
    ignores: [
      '.output/**',
      '.output-*/**',
      '.nitro/**',
      '.data/**',
      'node_modules/**',
      'test/artifacts/**',
      'coverage/**',
      '**/*.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // Tests, benches and scripts read arbitrary JSON answers; `any` there is the honest type.
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
  {
    // The dashboard's only browser script.
    files: ['server/dashboard/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        EventSource: 'readonly',
        JSON: 'readonly',
      },
    },
  },
)
