// ESLint (flat config): typescript-eslint's strict and stylistic type-checked sets, less the rules that only add noise
// here. Formatting is Prettier's job (.prettierrc.json); eslint-config-prettier turns off every rule that would fight it.
// `npm run lint` runs ESLint, `prettier --check` and knip.
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'node_modules/', '.cache/', 'data/', 'coverage/', 'bench/tmp/']),
  eslint.configs.recommended,
  tseslint.configs.strictTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Async methods implement Promise-returning interfaces over synchronous code (SQLite): `async` is what turns a
      // throw into a rejection, so an async function without await is deliberate here.
      '@typescript-eslint/require-await': 'off',
      // It asks for `x!` where the code writes `x as T`, which no-non-null-assertion (kept) forbids: the two conflict.
      '@typescript-eslint/non-nullable-type-assertion-style': 'off',
      // Numbers and booleans print fine in a template; objects, nullish values and `any` are still caught.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `(x) => void-call` shorthands in callbacks are an idiom, not a confusion; `return voidCall()` is still caught.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // The code's own convention: `T[]` for simple types, `Array<{ ... }>` for object and union types.
      '@typescript-eslint/array-type': ['error', { default: 'array-simple' }],
      // `_name` marks a binding kept on purpose (a parameter a signature needs); `...rest` destructuring drops keys.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // The dashboard's browser modules are outside tsconfig.json (no Node types): typed by their own project, which
    // also pulls in the domain modules they import.
    files: ['src/dashboard/client/**/*.ts'],
    languageOptions: {
      parserOptions: {
        projectService: false,
        project: './tsconfig.dashboard.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // chai's property assertions (`expect(x).to.be.true`) are expression statements.
      '@typescript-eslint/no-unused-expressions': 'off',
      // A test asserts what it looks up; a wrong `!` fails the test at once, which is what the test is for.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // This file is plain JavaScript outside tsconfig.json: lint it without type information.
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  prettier,
);
