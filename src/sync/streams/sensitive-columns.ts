import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {QuestbackConfig, SensitiveColumn} from '../../core/config';
import {connectorError} from '../../core/errors';
import {warehouseName} from './column-names';
import {isCreatedHeader, isResponseIdHeader} from '../../csv/header';
import {questionParts, recordColumns} from './record-columns';
import {quote} from '../../core/outside-text';

// sensitive_columns: which columns of a header are hashed, dropped or kept, by the names a user may
// give them, and the respondent-information columns the export adds (include_respondent_information).

/** What happens to a column's values before a record leaves the connector. */
export type Treatment = 'keep' | 'hash' | 'drop';

/** The treatment of each column of one export's header, and which config entries named some column. */
interface SensitiveHeader {
  treatments: Treatment[];
  /** The config entries that matched a column of this header. */
  matched: SensitiveColumn[];
}

/** Header texts of respondent information, letters only, lower case ("E-mail" -> email). */
const RESPONDENT_TEXTS = new Set([
  'email',
  'emailaddress',
  'mail',
  'phone',
  'phonenumber',
  'mobile',
  'mobilephone',
  'mobilenumber',
  'telephone',
  'cellphone',
]);

/** Whether a header text is a column of respondent information (contact details) the export adds. */
export function isRespondentColumn(text: string): boolean {
  return RESPONDENT_TEXTS.has(text.toLowerCase().replace(/[^a-z]/g, ''));
}

/** The names a column answers to in sensitive_columns: its header text, its column names, its question. */
function namesOf(header: readonly string[], config: QuestbackConfig): Set<string>[] {
  const names = recordColumns(header, config.column_names).map((c) => c.name);
  const parts = questionParts(header);
  return header.map((text, i) => {
    const of = new Set([text.trim(), names[i], warehouseName(text)]);
    if (parts[i].option !== null) of.add(parts[i].question.trim());
    return of;
  });
}

/**
 * Each column's treatment by sensitive_columns (an entry names a column by header text, by its
 * column name in either naming, or by the question of expanded multiple-choice columns). The
 * Response ID and Created columns are the records' keys and cursor: hashing or dropping them fails.
 */
export function sensitiveHeader(header: readonly string[], config: QuestbackConfig, questId: string): SensitiveHeader {
  const treatments: Treatment[] = header.map(() => 'keep');
  const matched: SensitiveColumn[] = [];
  if (config.sensitive_columns.length === 0) return {treatments, matched};
  const names = namesOf(header, config);
  for (const entry of config.sensitive_columns) {
    const hits = names.flatMap((of, i) => (of.has(entry.column) ? [i] : []));
    if (hits.length) matched.push(entry);
    for (const i of hits) {
      if (entry.action !== 'keep' && (isResponseIdHeader(header[i]) || isCreatedHeader(header[i]))) {
        throw connectorError(
          'config_error',
          `sensitive_columns would ${entry.action} ${quote(header[i])} of quest ${questId}, a key of every record (the response's id or creation time), not an answer. Remove ${quote(entry.column)} from sensitive_columns.`,
          {questId, column: header[i]}
        );
      }
      // A column named twice (by its text and by its question) takes the stronger protection.
      if (treatments[i] !== 'drop') treatments[i] = entry.action === 'keep' ? treatments[i] : entry.action;
    }
  }
  return {treatments, matched};
}

const DONE: Record<Treatment, string> = {keep: 'kept as it is', hash: 'hashed (HMAC-SHA-256)', drop: 'dropped'};

/** What happens to the header's sensitive columns, in words ("E-mail: hashed (HMAC-SHA-256); Phone: dropped"). */
function describeTreatments(header: readonly string[], sensitive: SensitiveHeader): string {
  return header
    .flatMap((text, i) =>
      sensitive.treatments[i] !== 'keep' ? [`${quote(text)}: ${DONE[sensitive.treatments[i]]}`] : []
    )
    .join('; ');
}

/** The config's sensitive columns in words, for a schema that names no columns (the combined and long layouts). */
export function describeConfigured(config: QuestbackConfig): string {
  const listed = config.sensitive_columns.filter((c) => c.action !== 'keep');
  if (!listed.length) return '';
  return ` Sensitive columns (sensitive_columns): ${listed.map((c) => `${quote(c.column)} ${DONE[c.action]}`).join('; ')}.`;
}

/**
 * What discover and a read say of one quest's header: what happens to its sensitive columns, the
 * entries that named none of its columns, and respondent information sent as it is (a suggestion,
 * nothing changed: the user decides).
 */
export function sensitiveNotes(
  header: readonly string[],
  config: QuestbackConfig,
  questId: string,
  sensitive: SensitiveHeader
): {warn: boolean; text: string}[] {
  const notes: {warn: boolean; text: string}[] = [];
  const done = describeTreatments(header, sensitive);
  if (done) notes.push({warn: false, text: `Quest ${questId}: sensitive columns ${done}.`});
  const unmatched = config.sensitive_columns.filter((c) => !sensitive.matched.includes(c));
  if (unmatched.length) {
    notes.push({
      warn: false,
      text: `Quest ${questId}: sensitive_columns names ${unmatched.map((c) => quote(c.column)).join(', ')}, which match no column of its export (header texts: ${header
        .slice(0, 8)
        .map((h) => quote(h))
        .join(', ')}${header.length > 8 ? ', ...' : ''}). Check the spelling if the quest has such a column.`,
    });
  }
  const clear = header.filter((text, i) => isRespondentColumn(text) && sensitive.treatments[i] === 'keep');
  const named = new Set(sensitive.matched.map((c) => c.column));
  const unnamed = clear.filter((text) => !named.has(text.trim()));
  if (config.include_respondent_information && unnamed.length) {
    const suggestion = JSON.stringify([
      ...config.sensitive_columns,
      ...unnamed.map((column) => ({column, action: 'hash'})),
    ]);
    notes.push({
      warn: true,
      text: `Quest ${questId}: the export carries respondent information (${unnamed.map((h) => quote(h)).join(', ')}) that reaches the warehouse as it is. To protect it, set sensitive_columns to ${suggestion} and a hash_salt; nothing is changed unless you do.`,
    });
  }
  return notes;
}

/** A text's letters and digits, lower case, without accents: what two spellings of a column share. */
function looks(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/** Edits (insert, delete, replace) from a to b. */
function editDistance(a: string, b: string): number {
  let row = Array.from({length: b.length + 1}, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** The header texts that look like an entry: one's letters hold the other's, or differ in a few. */
function lookAlikes(entry: string, header: readonly string[]): string[] {
  const e = looks(entry);
  if (!e) return [];
  return header.filter((text) => {
    const t = looks(text);
    return !!t && (t.includes(e) || e.includes(t) || editDistance(e, t) <= Math.max(1, Math.floor(e.length / 4)));
  });
}

/**
 * A quest's sensitive columns as its read meets its headers; what they mean is logged once per
 * quest. An entry that hashed or dropped a column of the quest before (`matched`, the list its state
 * carries) and matches none of a header now fails the quest: the column was renamed in the survey
 * and would otherwise leave the connector in clear.
 */
export class QuestSensitivity {
  private noted = false;

  constructor(
    private readonly config: QuestbackConfig,
    private readonly questId: string,
    private readonly logger: AirbyteLogger,
    private readonly matched: string[] = []
  ) {}

  /** Each column's treatment in this header (a survey edited during the sync gives another header). */
  treatments(header: readonly string[]): Treatment[] {
    const sensitive = sensitiveHeader(header, this.config, this.questId);
    const now = new Set(sensitive.matched.filter((c) => c.action !== 'keep').map((c) => c.column));
    const lost = this.matched.filter((entry) => !now.has(entry));
    if (lost.length) throw this.renamed(lost, header);
    for (const entry of now) if (!this.matched.includes(entry)) this.matched.push(entry);
    if (!this.noted) {
      this.noted = true;
      for (const note of sensitiveNotes(header, this.config, this.questId, sensitive)) {
        if (note.warn) this.logger.warn(note.text);
        else this.logger.info(note.text);
      }
    }
    return sensitive.treatments;
  }

  private renamed(lost: readonly string[], header: readonly string[]): Error {
    const each = lost.map((entry) => {
      const like = lookAlikes(entry, header);
      return `${JSON.stringify(entry)} (header texts that look like it: ${like.length ? like.map((t) => JSON.stringify(t)).join(', ') : 'none'})`;
    });
    return connectorError(
      'config_error',
      `Quest ${this.questId}: sensitive_columns ${lost.length > 1 ? 'entries' : 'entry'} ${each.join(', ')} matched a column of this quest in an earlier sync and ${lost.length > 1 ? 'match' : 'matches'} none of its export now: the column was renamed in the survey, and its values would leave the connector in clear. Nothing of this quest was read. In sensitive_columns, replace the entry by the column's text as the export has it now (or remove the entry if the column is gone from the survey), then sync again.`,
      {questId: this.questId, entries: lost.join(', ')}
    );
  }
}
