// Lint configuration: eslint 9 flat config with typescript-eslint's recommended rules.
// NOTE: the syntax-only rule sets are used. Measured on src/ and test/: recommendedTypeChecked
// takes 26 s (23 s CPU, 760 MB) against 13 s for the whole tree here, and reports about 1,900
// findings that need a rule-by-rule decision first (900 no-floating-promises on node:test's
// describe/it, 650 no-unsafe-member-access on `any`, most of them in test/; src/expr's `any`
// bag on the hot path).
// `npm run lint` runs it; `npm test` runs it before the tests.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'client/dist/', 'node_modules/', 'bench/node_modules/', 'bench/results/', 'coverage/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Plain JavaScript files (scripts/*.mjs, bench/lib/*.mjs, this file) run on Node.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    rules: {
      // A leading underscore marks a parameter or binding that is unused on purpose (an
      // interface's argument, a property left out of a `...rest` copy).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Names, keys and tenant ids are checked against control characters (\x00-\x1f) on
      // purpose: a regular expression with that range is the check, not a mistake.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests and benchmarks read untyped answers (JSON bodies, gRPC clients built by
    // proto-loader at run time, peer engines without types): `any` and `Function` are the
    // honest types there.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-function-type': 'off',
    },
  },
  {
    // Known findings in folders reworked on other branches, reported as warnings until their
    // owners settle them (a deliberate `any` for speed gets a disable comment with its NOTE).
    files: ['src/expr/compile-path.ts', 'src/transport/grpc/handlers.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'warn' },
  },
);
