// Lint rules: the usual TypeScript rules, plus the one-way imports between the layers of src/ and
// between the parts of src/sync.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/, lowest first: a layer imports only from the layers before it. protocol
 * imports csv deliberately: the record encoder and its worker thread write JSON straight from a
 * row batch's bytes (csv/rows.ts), so no string per cell is made on the way to stdout.
 */
const LAYERS = [
  ['core', []],
  ['api', ['core']],
  ['csv', ['core']],
  ['sync', ['core', 'api', 'csv']],
  ['probe', ['core', 'api', 'csv']],
  ['protocol', ['core', 'csv', 'sync', 'probe']],
];
const ALL = ['core', 'api', 'csv', 'sync', 'probe', 'protocol'];

/**
 * The parts of src/sync, lowest first: a part imports only from the parts before it (and from
 * sync/output-port.ts, the port every part may use). state: checkpoints and the state's format;
 * exports: an export's job, slots and policy; windows: one quest's windows and its read; streams: the
 * stream definitions; commands: check, discover, read.
 */
const SYNC_PARTS = ['state', 'exports', 'windows', 'streams', 'commands'];

function layerPatterns(layer, allowed) {
  return [
    ...ALL.filter((other) => other !== layer && !allowed.includes(other)).map((other) => ({
      regex: `^(\\.\\./)+${other}(/|$)`,
      message: `src/${layer} may import only from ${allowed.length ? allowed.map((a) => `src/${a}`).join(', ') : 'nothing else in src'}: imports run one way (core, then api and csv, then sync and probe, then protocol, then src/index.ts).`,
    })),
    {regex: '^(\\.\\./)+(index)?$', message: 'Only src/index.ts wires the layers together; nothing imports it.'},
  ];
}

/**
 * Folders whose index.ts is their one public entry: what lies behind it (the resume keys' entry
 * layout) is theirs alone. Files inside import each other as ./name, which the pattern leaves alone.
 */
const ENTRY_FOLDERS = ['resume'];
const entryPatterns = ENTRY_FOLDERS.map((name) => ({
  regex: `(^|/)${name}/(?!index$)[^/]+$`,
  message: `Import the ${name} folder through its index.ts only: what lies behind it is its own.`,
}));

const restrict = (files, patterns) => ({
  files,
  rules: {'no-restricted-imports': ['error', {patterns: [...patterns, ...entryPatterns]}]},
});

/** For each layer, the imports it may not make: higher or sibling layers, and the entry point. */
const boundaries = LAYERS.map(([layer, allowed]) => restrict([`src/${layer}/**/*.ts`], layerPatterns(layer, allowed)));

/** Within src/sync (a later block replaces the rule's options for its files, so each carries the layer's too). */
const syncPatterns = layerPatterns('sync', ['core', 'api', 'csv']);
const syncBoundaries = [
  restrict(
    ['src/sync/*.ts'],
    [
      ...syncPatterns,
      {regex: `^\\./(${SYNC_PARTS.join('|')})(/|$)`, message: 'The port of src/sync imports none of its parts.'},
    ]
  ),
  ...SYNC_PARTS.map((part, i) => {
    const higher = SYNC_PARTS.slice(i + 1);
    const lower = SYNC_PARTS.slice(0, i);
    return restrict(
      [`src/sync/${part}/**/*.ts`],
      [
        ...syncPatterns,
        ...(higher.length
          ? [
              {
                regex: `^(\\.\\./)+(${higher.join('|')})(/|$)`,
                message: `src/sync/${part} may import only from ${lower.length ? lower.map((p) => `src/sync/${p}`).join(', ') + ' and ' : ''}src/sync/output-port.ts: the parts of src/sync import one way (${SYNC_PARTS.join(', then ')}).`,
              },
            ]
          : []),
      ]
    );
  }),
];

export default tseslint.config(
  {ignores: ['lib/', 'lib.build-*/', 'lib.old-*/', 'coverage/', 'node_modules/', 'bin/']},
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
  {
    // The build script and jest's transform run before anything is compiled: plain CommonJS for Node.
    files: ['scripts/**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        process: 'readonly',
        __dirname: 'readonly',
        __filename: 'readonly',
        module: 'writable',
      },
    },
    rules: {'@typescript-eslint/no-require-imports': 'off'},
  },
  ...boundaries,
  ...syncBoundaries
);
