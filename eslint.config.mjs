// Lint rules: the usual TypeScript rules, plus the one-way imports between the layers of src/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The layers of src/, lowest first: a layer imports only from the layers before it. */
const LAYERS = [
  ['core', []],
  ['api', ['core']],
  ['csv', ['core']],
  ['sync', ['core', 'api', 'csv']],
  ['protocol', ['core', 'csv', 'sync']],
];
const ALL = ['core', 'api', 'csv', 'sync', 'protocol'];

/** For each layer, the imports it may not make: higher or sibling layers, and the entry point. */
const boundaries = LAYERS.map(([layer, allowed]) => ({
  files: [`src/${layer}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...ALL.filter((other) => other !== layer && !allowed.includes(other)).map((other) => ({
            regex: `^(\\.\\./)+${other}(/|$)`,
            message: `src/${layer} may import only from ${allowed.length ? allowed.map((a) => `src/${a}`).join(', ') : 'nothing else in src'}: imports run one way (core, then api and csv, then sync, then protocol, then src/index.ts).`,
          })),
          {regex: '^(\\.\\./)+(index)?$', message: 'Only src/index.ts wires the layers together; nothing imports it.'},
        ],
      },
    ],
  },
}));

export default tseslint.config(
  {ignores: ['lib/', 'coverage/', 'node_modules/', 'bin/']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_'}],
      'no-constant-condition': ['error', {checkLoops: false}],
      eqeqeq: ['error', 'always'],
    },
  },
  ...boundaries
);
