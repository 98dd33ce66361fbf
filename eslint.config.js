import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', '.brokers/**', '.venv/**', '.reliability/**', '**/*.generated.*'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } },
  },
  {
    // Tests poke at decoded JSON records; `any` keeps those assertions readable.
    files: ['**/test/**/*.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      // Without a message, a failing assert.ok() makes Node parse the test's source to
      // build one, which under tsx can loop forever and hang the whole file.
      'no-restricted-syntax': ['error',
        {
          selector: "CallExpression[callee.object.name='assert'][callee.property.name='ok'][arguments.length<2]",
          message: 'give assert.ok a message: without one a failure can hang the file (Node parses the source under tsx)',
        },
        {
          selector: "CallExpression[callee.name='assert'][arguments.length<2]",
          message: 'give assert() a message: without one a failure can hang the file (Node parses the source under tsx)',
        },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
