// The connector's spec, declared once. resources/spec.json is written from it (npm run spec; a test
// checks that the file is current), and the types of the config and of the export settings follow
// from it (config.ts, api/client.ts): an option is added here and nowhere else.
//
// `exportSetting` (left out of spec.json) names the export setting the option is sent as. The export
// settings are digested in the order of the options here (sync/state/stream-state.ts
// exportFingerprint): a new one goes after the others, so that states written before keep their digest.

/** A quest id: a UUID, in either case. */
const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

export const SPEC_DECLARATION = {
  supportsIncremental: true,
  supported_destination_sync_modes: ['overwrite', 'append', 'append_dedup'],
  connectionSpecification: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Questback Source Spec',
    type: 'object',
    required: ['client_id', 'client_secret', 'quest_ids', 'start_date'],
    additionalProperties: true,
    groups: [
      {
        id: 'account',
        title: 'API login and quests',
      },
      {
        id: 'export',
        title: 'Export contents',
      },
      {
        id: 'privacy',
        title: 'Personal data',
      },
      {
        id: 'sync',
        title: 'Incremental sync and performance',
      },
      {
        id: 'errors',
        title: 'Error handling',
      },
      {
        id: 'service',
        title: 'Service addresses',
      },
    ],
    properties: {
      client_id: {
        order: 0,
        group: 'account',
        type: 'string',
        title: 'Client ID',
        description:
          'Client ID of your Questback API login, e.g. 312345678901234567@questback. The account owner creates API logins in Questback, or Questback support issues them.',
        examples: ['312345678901234567@questback'],
      },
      client_secret: {
        order: 1,
        group: 'account',
        type: 'string',
        title: 'Client Secret',
        description:
          'Client secret of the same API login. Airbyte stores it encrypted; the connector never writes it to logs or error messages.',
        airbyte_secret: true,
      },
      quest_ids: {
        order: 2,
        group: 'account',
        type: 'array',
        title: 'Quest IDs',
        description:
          "The quests (surveys) to export, one stream (table) per quest. A quest's id is the UUID in the quest's address in Questback. For example, in an address like https://app.questback.com/quests/1b4e28ba-2fa1-11d2-883f-0016d3cca427/… the id is 1b4e28ba-2fa1-11d2-883f-0016d3cca427 (this only shows where the id appears; your quest's address may look different). The API login must be allowed to read every quest listed.",
        items: {
          type: 'string',
          // What the connector cleans (questIdOf in config-rules.ts): spaces around it, upper case, or braces around
          // it (as Windows tools copy a GUID), so that the form does not refuse an id the connector takes.
          pattern: `^\\s*(\\{\\s*${UUID}\\s*\\}|${UUID})\\s*$`,
          pattern_descriptor:
            'UUID, e.g. 1b4e28ba-2fa1-11d2-883f-0016d3cca427 (in braces or with spaces around it too)',
        },
        minItems: 1,
        uniqueItems: true,
        examples: [['1b4e28ba-2fa1-11d2-883f-0016d3cca427']],
      },
      start_date: {
        order: 3,
        group: 'account',
        type: 'string',
        title: 'Start Date',
        description:
          'UTC date-time from which responses are exported on the first sync (responses created at or after it), e.g. 2024-01-01T00:00:00Z. Later syncs continue from where the last one stopped. It must not lie in the future. An earlier date makes the first sync longer.',
        pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$',
        pattern_descriptor: 'YYYY-MM-DDTHH:mm:ssZ',
        format: 'date-time',
        examples: ['2024-01-01T00:00:00Z'],
      },
      column_names: {
        order: 5,
        group: 'account',
        type: 'string',
        title: 'Column Names',
        description:
          'How the columns are named. "warehouse" (the default, recommended): lower-case ASCII names of at most 63 characters that every destination keeps as they are. A name depends on its question text alone, so a column keeps its meaning when questions are inserted, removed or reordered: a plain ASCII text keeps its words ("Response ID" becomes response_id), any other text gets its words and a short hash of the whole text ("Q1. How satisfied are you? (1-5)" becomes q1_how_satisfied_are_you_1_5_43714c59); the full text stays as the column\'s title. "survey": the header texts exactly as the survey shows them, which destinations rewrite in their own ways. In Postgres, long question texts that share their first 63 characters (the expanded columns of a multiple-choice question, for one) then give clashing column names, which Airbyte\'s Postgres destination cannot always resolve: the sync can fail. Use it only if your destination keeps such names. Changing this renames every column: refresh the source schema afterwards.',
        enum: ['warehouse', 'survey'],
        default: 'warehouse',
        always_show: true,
      },
      stream_layout: {
        order: 6,
        group: 'account',
        type: 'string',
        title: 'Stream Layout',
        description:
          'How quests become streams. "per_quest" (the default): one stream per quest (quest_<id>), each answer column its own warehouse column; discover exports a small sample of every quest to learn its columns. Best for a few dozen quests whose answers you query as columns. "combined": one stream "responses" for all quests, with quest_id, response_id, created and the answers in one JSON object keyed by their header texts exactly as exported; discover needs no export, one table serves every quest, and queries can span quests. Choose it for many quests (hundreds), or when quests are added often. "long": one stream "answers" for all quests with one row per non-empty answer: quest, response, created, the column\'s name, header, question and option, the value as text and, when it is a plain number, as a number. The layout BI tools read without pivoting ("the average rating of question X per month, across quests"); it writes one record per answer instead of one per response. Changing it replaces the streams: refresh the source schema and reset the connection afterwards.',
        enum: ['per_quest', 'combined', 'long'],
        default: 'per_quest',
        always_show: true,
      },
      value_type: {
        order: 7,
        group: 'export',
        type: 'string',
        title: 'Answer Value Type',
        description:
          "How the service writes the answers to choice questions. ORDER_NUMBER (the default, and the value Questback's API documents): the order numbers of the chosen options, e.g. 2. TEXT: the text of the option; this is what Questback's older API called \"raw value as text\", and the current API does not document it, so if the service rejects it the sync fails with the service's message.",
        enum: ['ORDER_NUMBER', 'TEXT'],
        default: 'ORDER_NUMBER',
        exportSetting: 'valueType',
      },
      expand_multiple_choice_to_columns: {
        order: 8,
        group: 'export',
        type: 'boolean',
        title: 'Expand Multiple Choice to Columns',
        description:
          'Write each option of a multiple-choice question as its own column instead of all chosen options in one cell. Changes the columns: refresh the source schema after changing it.',
        default: false,
        exportSetting: 'expandMultipleChoiceToColumns',
      },
      include_respondent_information: {
        order: 4,
        group: 'account',
        type: 'boolean',
        title: 'Include Respondent Information (personal data)',
        description:
          "Off by default. When on, every response also carries the respondent's contact details, such as e-mail address and phone number. This is personal data: turn it on only if your warehouse may hold it and you need it. Adds columns: refresh the source schema after changing it.",
        default: false,
        always_show: true,
        exportSetting: 'includeRespondentInformation',
      },
      sensitive_columns: {
        order: 10,
        group: 'privacy',
        type: 'array',
        title: 'Sensitive Columns',
        description:
          'Columns whose values must not reach the warehouse as they are, and what happens to each before a record leaves the connector, in every layout: "hash" replaces a value by its keyed hash (HMAC-SHA-256 with the Hash Salt, 64 hex digits: the same value gives the same hash in every quest and sync, so you can still count, join and de-duplicate on it, but nobody can read it or find it by hashing a list of addresses without the salt), "drop" leaves the column out, "keep" sends it as it is (to say so explicitly). Name a column by its header text exactly as exported ("E-mail"), by its column name (e_mail), or by a question of expanded multiple-choice columns (all its options). Empty cells stay empty. With Include Respondent Information on, the export adds the respondent\'s E-mail and Phone: the example shows how to hash them. Nothing is changed unless you list it here; discover shows what happens to each listed column.',
        items: {
          type: 'object',
          title: 'Column',
          required: ['column', 'action'],
          properties: {
            column: {
              type: 'string',
              title: 'Column',
              description: 'Header text ("E-mail"), column name (e_mail) or question of the column.',
              examples: ['E-mail', 'Phone'],
            },
            action: {
              type: 'string',
              title: 'Action',
              description: 'hash: keyed hash (needs the Hash Salt); drop: left out; keep: sent as it is.',
              enum: ['hash', 'drop', 'keep'],
              default: 'hash',
            },
          },
        },
        default: [],
        examples: [
          [
            {
              column: 'E-mail',
              action: 'hash',
            },
            {
              column: 'Phone',
              action: 'hash',
            },
          ],
        ],
        always_show: true,
      },
      hash_salt: {
        order: 11,
        group: 'privacy',
        type: 'string',
        title: 'Hash Salt',
        description:
          'The secret key of the hashes of Sensitive Columns: required when a column is hashed, at least 16 characters (e.g. the output of `openssl rand -hex 32`). Keep it secret and never change it: the same value gets the same hash only under the same salt, so a new salt breaks every join and count across syncs. Airbyte stores it encrypted; the connector never writes it anywhere.',
        pattern: '^.{16,}$',
        pattern_descriptor: 'at least 16 characters',
        airbyte_secret: true,
      },
      lookback_days: {
        order: 12,
        group: 'sync',
        type: 'number',
        title: 'Lookback (days)',
        description:
          'On incremental syncs, read again this many days before where the last sync stopped, to pick up responses that reach the service late. Responses read again are sent again: use a deduplicating destination sync mode (append_dedup; the response id is the primary key). 0 (the default) reads nothing twice. From 0 to 90; fractions such as 0.5 are allowed.',
        minimum: 0,
        maximum: 90,
        default: 0,
      },
      window_days: {
        order: 13,
        group: 'sync',
        type: 'integer',
        title: 'Longest Export Window (days)',
        description:
          'An optional cap on the time span one export covers. Leave empty to let windows follow the data: each export is sized for about target_rows_per_export responses. Set it if a sync should save its progress (state) at least every so many days of responses, or if the service struggles with long time spans. A whole number of days from 1 to 3,650.',
        minimum: 1,
        maximum: 3650,
      },
      target_rows_per_export: {
        order: 14,
        group: 'sync',
        type: 'integer',
        title: 'Target Rows per Export',
        description:
          "About how many responses one export job should hold. The connector sizes the time window of each export from what earlier exports returned, and saves the stream's progress (state) after each one. Lower it if exports time out or you want more frequent checkpoints; raise it for fewer export jobs on very large quests. A whole number from 100 to 10,000,000.",
        minimum: 100,
        maximum: 10000000,
        default: 100000,
      },
      settle_seconds: {
        order: 15,
        group: 'sync',
        type: 'integer',
        title: 'Settle Time (seconds)',
        description:
          'A sync exports responses created up to this many seconds before it starts, so that responses still being written are taken by the next sync instead of being missed. Raise it if responses appear on the service with a delay; 0 reads up to the whole second before the sync starts. A whole number from 0 to 86,400 (one day).',
        minimum: 0,
        maximum: 86400,
        default: 60,
      },
      max_concurrent_exports: {
        order: 16,
        group: 'sync',
        type: 'integer',
        title: 'Concurrent Exports',
        description:
          'How many export jobs the service may be generating for this connection at once, across all quests and windows. Lower it if Questback asks you to or throttles the syncs; raise it to sync many quests faster. A whole number from 1 to 32.',
        minimum: 1,
        maximum: 32,
        default: 8,
      },
      export_timeout_minutes: {
        order: 17,
        group: 'sync',
        type: 'number',
        title: 'Export Timeout (minutes)',
        description:
          'How long to wait for the service to generate one export. An export not ready by then is tried again as smaller windows; if those time out too, the stream fails and the next sync tries again. Raise it for very large quests or when the service is slow. From 0.05 to 1,440 (one day); fractions are allowed.',
        minimum: 0.05,
        maximum: 1440,
        default: 60,
      },
      request_timeout_seconds: {
        order: 18,
        group: 'sync',
        type: 'integer',
        title: 'Request Timeout (seconds)',
        description:
          'How long to wait for the answer to one HTTP request, or for the next bytes of a download, before the request is retried. Raise it if syncs fail with timeouts on a slow network or service. A whole number from 1 to 3,600.',
        minimum: 1,
        maximum: 3600,
        default: 120,
      },
      skip_inaccessible_quests: {
        order: 19,
        group: 'errors',
        type: 'boolean',
        title: 'Skip Inaccessible Quests',
        description:
          'Off by default: a quest the API login may not read (403) or that does not exist (404) fails the sync, so that you notice. When on, such a quest is skipped with a warning, its stream keeps its state, and the other quests sync and the sync succeeds. Turn it on if quests may be deleted or their access withdrawn while the connection should keep running.',
        default: false,
      },
      accept_stray_quotes: {
        order: 20,
        group: 'errors',
        type: 'boolean',
        title: 'Accept Stray Quotes',
        description:
          'Off by default: a double quote inside an unquoted CSV cell (e.g. 24" screen), which CSV does not allow, fails the stream with the line number, so a broken file is never loaded silently. When on, such a quote is read as part of the text. Turn it on if a sync fails with a message about a quote inside an unquoted cell.',
        default: false,
      },
      api_url: {
        order: 21,
        group: 'service',
        type: 'string',
        title: 'API URL',
        description:
          'Base address of the Questback API, without /v1 (the connector adds it). Keep the default; change it only for a test service or a proxy. Must be https:// (http:// is accepted for localhost only).',
        pattern: '^https?://',
        default: 'https://api.questback.com',
      },
      auth_url: {
        order: 22,
        group: 'service',
        type: 'string',
        title: 'Token Service URL',
        description:
          "Base address of Questback's token service, without /oauth/v2/token (the connector adds it). Keep the default; change it only for a test service or a proxy. Must be https:// (http:// is accepted for localhost only).",
        pattern: '^https?://',
        default: 'https://auth.questback.com',
      },
      project_id: {
        order: 23,
        group: 'service',
        type: 'string',
        title: 'Project ID',
        description:
          "Numeric project id of Questback's identity provider, part of the OAuth scope of the token request. Keep the default unless Questback support gives you another; a wrong one makes the credentials fail. Digits only.",
        pattern: '^[0-9]+$',
        pattern_descriptor: 'digits only',
        default: '314876184947078893',
      },
      field_separator: {
        order: 24,
        group: 'export',
        type: 'string',
        title: 'CSV Field Separator',
        description:
          'Separator the service is asked to use in the CSV files: a transport detail, hidden from the form. The connector parses any of them; PIPE is the documented value.',
        enum: ['PIPE', 'COMMA', 'SEMICOLON', 'TAB'],
        default: 'PIPE',
        airbyte_hidden: true,
        exportSetting: 'fieldSeparator',
      },
      show_other_as_text: {
        order: 9,
        group: 'export',
        type: 'boolean',
        title: 'Show Other as Text',
        description:
          'Write the text of "other" answers in the answer cell instead of a separate column. Changes the columns: refresh the source schema after changing it.',
        default: false,
        exportSetting: 'showOtherAsText',
      },
    },
  },
} as const;
