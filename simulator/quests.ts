// The quests a simulator serves: each config checked and completed with its defaults.

import {parseCreatedAt, resolveTable} from './data';
import {ENCODINGS} from './encoding';
import {PRESETS} from './title-presets';
import {QuestConfig, QuestTable, ResolvedQuest} from './types';

export const DEFAULT_QUEST_IDS = [
  '3f6c1a52-8d4e-4b7a-9c21-5e0d7f8a1b34',
  'a9e27c40-1b5d-4f83-8e6a-0c4d92b7f615',
] as const;
export const DEFAULT_COLUMNS = 6;
const DEFAULT_QUESTS: QuestConfig[] = [
  {id: DEFAULT_QUEST_IDS[0], rows: 25, columns: 7},
  {id: DEFAULT_QUEST_IDS[1], rows: 40, columns: 12, languages: ['en', 'no']},
];

function oneOf<T extends string>(questId: string, name: string, value: T | undefined, allowed: readonly T[]): void {
  if (value !== undefined && !allowed.includes(value)) {
    throw new Error(`quest ${questId}: ${name} must be one of ${allowed.join(', ')}`);
  }
}

function resolveQuest(q: QuestConfig, startMs: number): ResolvedQuest {
  if (q.table) return resolveTableQuest(q, q.table);
  // Explicit creation times define the rows; rows and firstCreatedAt, when given too, must agree.
  const {createdAt: given, ...rest} = q;
  const createdAt = given ? parseCreatedAt(q.id, given) : undefined;
  const rows = createdAt?.length ?? q.rows;
  if (!Number.isInteger(rows) || (rows as number) < 0) throw new Error(`quest ${q.id}: rows must be an integer >= 0`);
  if (createdAt && q.rows !== undefined && q.rows !== rows) {
    throw new Error(`quest ${q.id}: rows (${q.rows}) disagrees with createdAt (${rows} times)`);
  }
  let firstCreatedAt = q.firstCreatedAt ?? new Date(startMs - 30 * 24 * 3600 * 1000).toISOString();
  if (createdAt && createdAt.length > 0) {
    if (q.firstCreatedAt !== undefined && Date.parse(q.firstCreatedAt) !== createdAt[0]) {
      throw new Error(`quest ${q.id}: firstCreatedAt disagrees with the earliest createdAt`);
    }
    firstCreatedAt = new Date(createdAt[0]).toISOString();
  }
  const columns = q.columns ?? q.questionTitles?.length ?? DEFAULT_COLUMNS;
  if (!Number.isInteger(columns) || columns < 1) throw new Error(`quest ${q.id}: columns must be an integer >= 1`);
  if (q.questionTitles && q.questionTitles.length !== columns) {
    throw new Error(`quest ${q.id}: questionTitles needs one title per column (${columns})`);
  }
  oneOf(q.id, 'titles', q.titles, Object.keys(PRESETS) as ResolvedQuest['titles'][]);
  oneOf(q.id, 'encoding', q.encoding, ENCODINGS);
  oneOf(q.id, 'lineEnding', q.lineEnding, ['crlf', 'lf']);
  oneOf(q.id, 'responseIds', q.responseIds, ['numeric', 'uuid']);
  const repeated = q.repeatedIds;
  if (repeated !== undefined && !(repeated >= 0 && repeated <= 1))
    throw new Error(`quest ${q.id}: repeatedIds must lie in [0, 1]`);
  if (repeated && q.corruption === 'cut-last-cell')
    throw new Error(`quest ${q.id}: repeatedIds and cut-last-cell do not go together (the cut is one offset)`);
  for (const name of ['invitations', 'invitationBurst'] as const) {
    const n = q[name];
    if (n !== undefined && !(Number.isInteger(n) && n >= 0))
      throw new Error(`quest ${q.id}: ${name} must be an integer >= 0`);
  }
  if ((q.invitationBurst ?? 0) > (q.invitations ?? Infinity))
    throw new Error(`quest ${q.id}: invitationBurst must not exceed invitations`);
  if (q.corruptRow !== undefined && !(Number.isInteger(q.corruptRow) && q.corruptRow >= 0))
    throw new Error(`quest ${q.id}: corruptRow must be an integer >= 0`);
  const perThousand = q.exportMsPerThousandRows;
  if (perThousand !== undefined && !(perThousand >= 0))
    throw new Error(`quest ${q.id}: exportMsPerThousandRows must be >= 0`);
  return {
    ...rest,
    rows: rows as number,
    ...(createdAt ? {createdAt} : {}),
    columns,
    languages: q.languages && q.languages.length > 0 ? [...q.languages] : ['en'],
    firstCreatedAt,
    headerOnEmpty: q.headerOnEmpty ?? true,
    titles: q.titles ?? 'english',
    encoding: q.encoding ?? 'utf8-bom',
    lineEnding: q.lineEnding ?? 'crlf',
    responseIds: q.responseIds ?? 'numeric',
  };
}

/** A quest whose responses are given as a table: the table says its rows, columns and times. */
function resolveTableQuest(q: QuestConfig, table: QuestTable): ResolvedQuest {
  const clash = (
    ['rows', 'createdAt', 'columns', 'titles', 'questionTitles', 'firstCreatedAt', 'repeatedIds'] as const
  ).filter((name) => q[name] !== undefined);
  if (clash.length) throw new Error(`quest ${q.id}: a table quest takes no ${clash.join(', ')}`);
  const {times} = resolveTable(q.id, table.header, table.rows);
  oneOf(q.id, 'encoding', q.encoding, ENCODINGS);
  oneOf(q.id, 'lineEnding', q.lineEnding, ['crlf', 'lf']);
  return {
    ...q,
    createdAt: undefined,
    rows: table.rows.length,
    columns: table.header.length,
    languages: q.languages && q.languages.length > 0 ? [...q.languages] : ['en'],
    firstCreatedAt: new Date(times[0] ?? 0).toISOString(),
    headerOnEmpty: q.headerOnEmpty ?? true,
    titles: 'english',
    encoding: q.encoding ?? 'utf8-bom',
    lineEnding: q.lineEnding ?? 'crlf',
    responseIds: 'numeric',
  };
}

/** The quests configured (the two default quests when none are), resolved at `startMs`. */
export function resolveQuests(configs: readonly QuestConfig[] | undefined, startMs: number): ResolvedQuest[] {
  return (configs ?? DEFAULT_QUESTS).map((q) => resolveQuest(q, startMs));
}
