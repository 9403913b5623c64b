import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {mapLimited} from '../../core/concurrency';
import {QuestbackConfig, SensitiveColumn} from '../../core/config';
import {connectorError, errorContext} from '../../core/errors';
import {keyedHash} from '../../core/keyed-hash';
import {cut, keyedByText} from '../../core/outside-text';
import {plural} from '../../core/quantities';
import {rfc3339} from '../../core/time-text';
import {findQuestInaccessible, QuestInaccessible, supportIds} from '../../api/api-error';
import {ListApi} from '../../api/client';
import {IdSet} from './id-set';
import {JsonSchema, objectSchema} from './record-columns';
import {catalogStream, StreamDefinition, StreamSupport, streamRef} from './stream-definition';

/** The stream of every configured quest's invitations: who was asked, by which channel, and what became of it. */
const INVITATIONS_STREAM = 'invitations';

/** The record's own fields and what each holds, each read from the Invitation model's field of its camelCase name. */
const FIELDS = (
  [
    {name: 'invitation_id', kind: 'text', doc: 'Id of the invitation (the primary key).'},
    {name: 'quest_id', kind: 'text', doc: 'Id of the quest (survey) the invitation is for.'},
    {name: 'added_at', kind: 'time', doc: 'When the invitation was added.'},
    {name: 'sent_at', kind: 'time', doc: 'When it was sent; null until then.'},
    {name: 'scheduled_send_at', kind: 'time', doc: 'When sending is planned, if delayed.'},
    {name: 'sent', kind: 'boolean', doc: 'It has been sent. Changes after the invitation is added.'},
    {
      name: 'replied',
      kind: 'boolean',
      doc: 'The invitee has answered; null when the quest hides identities. Changes after the invitation is added.',
    },
    {name: 'opted_out', kind: 'boolean', doc: 'The invitee opted out. Changes over time.'},
    {name: 'distribution_enabled', kind: 'boolean', doc: 'Questback sends it.'},
    {
      name: 'distribution_channel',
      kind: 'text',
      doc: 'EMAIL, SMS, EXTERNALLY_MANAGED, LINK, LINK_WITH_EMAIL or DYNAMIC_LINK; null when not given.',
    },
    {name: 'language_code', kind: 'text', doc: 'The language it is sent in.'},
    {
      name: 'origin',
      kind: 'text',
      doc: 'How it was added: ESSENTIALS, INTEGRATION, DYNAMIC_LINK_INVITE, DYNAMIC_LINK_ANSWER or SURVEY_LOGIN.',
    },
    {
      name: 'respondent_ident',
      kind: 'text',
      doc: 'Identifies the respondent, often an e-mail address: personal data (see sensitive_columns).',
    },
  ] as const
).map((field) => ({...field, from: field.name.replace(/_(\w)/g, (_, letter: string) => letter.toUpperCase())}));
type Field = (typeof FIELDS)[number];

/** Fields of an invitation the model does not list, kept under this field rather than lost. */
const EXTRA_FIELD = 'extra_fields';
/** The fields a record cannot do without: hashing or dropping them would break keys and joins. */
const KEYS = new Set(['invitation_id', 'quest_id']);
const MODEL_NAMES = new Set<string>(FIELDS.map((f) => f.from));

/**
 * Full refresh only: `sent`, `replied` and `opted_out` change after an invitation is first listed,
 * and the service does not say which timestamp `since`/`until` select by, so an incremental read
 * would keep each invitation's first statuses. A whole read costs a request per 950 invitations
 * (pages of 1,000 that overlap by 50: paged-list.ts).
 */
const SUPPORT: StreamSupport = {syncModes: ['full_refresh'], primaryKey: [['invitation_id']], resumable: false};

/** What sensitive_columns does to each field of this stream (entries naming a field, or a model name). */
function invitationTreatments(config: QuestbackConfig): Map<string, SensitiveColumn['action']> {
  const treatments = new Map<string, SensitiveColumn['action']>();
  for (const entry of config.sensitive_columns) {
    const field = FIELDS.find((f) => f.name === entry.column || f.from === entry.column);
    const name = field?.name ?? entry.column;
    if (entry.action !== 'keep' && KEYS.has(name)) {
      throw connectorError(
        'config_error',
        `sensitive_columns would ${entry.action} ${name} of the ${INVITATIONS_STREAM} stream, the key of every invitation record. Remove ${JSON.stringify(entry.column)} from sensitive_columns.`,
        {column: entry.column}
      );
    }
    // A field named twice takes the stronger protection.
    if (treatments.get(name) !== 'drop') treatments.set(name, entry.action);
  }
  return treatments;
}

/** A property of the stream's schema. */
type Property = JsonSchema['properties'][string];

function fieldSchema(field: Field, action: SensitiveColumn['action'] | undefined): Property {
  if (action === 'hash')
    return {type: ['null', 'string'], description: `${field.doc} Hashed: HMAC-SHA-256 under hash_salt.`};
  if (field.kind === 'boolean') return {type: ['null', 'boolean'], description: field.doc};
  if (field.kind === 'time') return {type: ['null', 'string'], format: 'date-time', description: field.doc};
  return KEYS.has(field.name)
    ? {type: 'string', description: field.doc}
    : {type: ['null', 'string'], description: field.doc};
}

/** The stream as discover lists it: the model's fields in snake_case, less those sensitive_columns drops. */
function invitationsCatalogStream(config: QuestbackConfig) {
  const treatments = invitationTreatments(config);
  const properties: JsonSchema['properties'] = {};
  for (const field of FIELDS) {
    const action = treatments.get(field.name);
    if (action !== 'drop') properties[field.name] = fieldSchema(field, action);
  }
  properties[EXTRA_FIELD] = {
    type: ['null', 'object'],
    description:
      'Fields of the invitation the documented model does not list, under their names as the service sent them (and a value the record could not use as typed); null when there are none.',
  };
  return catalogStream(INVITATIONS_STREAM, objectSchema(properties), SUPPORT);
}

/** An invitation as the list answers it: the model's fields and any others, by the service's names. */
type Invitation = Record<string, unknown> & {invitationId: string};

/** The item of an answer, checked: an object with an invitationId. */
function invitationItem(raw: unknown, questId: string): Invitation {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const item = raw as Record<string, unknown>;
    if (typeof item.invitationId === 'string' && item.invitationId !== '') return item as Invitation;
  }
  const shape = Array.isArray(raw)
    ? 'an array'
    : raw && typeof raw === 'object'
      ? `an object with ${
          Object.keys(raw)
            .slice(0, 8)
            .map((k) => cut(k, 40))
            .join(', ') || 'no keys'
        }`
      : `a ${raw === null ? 'null' : typeof raw}`;
  throw connectorError(
    'system_error',
    `Listing the invitations of quest ${questId}: an item of the list is ${shape}, not an invitation with an invitationId, so the list cannot be read. Tell Questback support, with this message.`,
    {questId}
  );
}

/** An invitation as the stream's record: typed fields, sensitive_columns applied, every other field under extra_fields. */
export function invitationRecord(
  item: Record<string, unknown>,
  questId: string,
  treatments: ReadonlyMap<string, SensitiveColumn['action']>,
  salt: string | undefined
): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  // Keyed by the service's field names: a field named __proto__ is a field like any other.
  const extra = keyedByText<unknown>();
  const protect = (name: string, value: unknown): unknown => {
    const action = treatments.get(name);
    if (action === 'hash' && value !== null && value !== undefined && salt !== undefined)
      return keyedHash(salt, typeof value === 'string' ? value : JSON.stringify(value));
    return value;
  };
  for (const field of FIELDS) {
    if (treatments.get(field.name) === 'drop') continue;
    const raw = field.name === 'quest_id' ? questId : item[field.from];
    let value: unknown = null;
    if (raw !== undefined && raw !== null) {
      if (field.kind === 'time' && typeof raw === 'string') value = rfc3339(raw) ?? null;
      else if (field.kind === 'boolean' && typeof raw === 'boolean') value = raw;
      else if (field.kind === 'text' && typeof raw === 'string') value = raw;
      // A value the field cannot hold as typed is kept as sent, under extra_fields.
      if (value === null) extra[field.from] = protect(field.name, raw);
    }
    record[field.name] = protect(field.name, value);
  }
  for (const [key, value] of Object.entries(item)) {
    if (MODEL_NAMES.has(key) || treatments.get(key) === 'drop') continue;
    extra[key] = protect(key, value);
  }
  record[EXTRA_FIELD] = Object.keys(extra).length ? extra : null;
  return record;
}

/**
 * The `invitations` stream: every configured quest's invitations, read whole in every sync (full
 * refresh) through the seed's list paging, so that statuses are as current as the sync. The list's
 * order is not documented and may move while it is read: an id met twice in one quest's read is
 * emitted once, and a move the pages' overlap did not cover costs a second read (readQuest).
 */
export const invitationsStream: StreamDefinition = {
  support: SUPPORT,

  async discover(ctx) {
    return [invitationsCatalogStream(ctx.config)];
  },

  plan(ctx, configured, _state, out) {
    const ref = streamRef(configured);
    if (ref.name !== INVITATIONS_STREAM) return undefined;
    const {config, logger} = ctx;
    const treatments = invitationTreatments(config);
    return {
      ref,
      questIds: config.quest_ids,
      readsResponses: false,
      read: async (env, skipped) => {
        let count = 0;
        await mapLimited(config.quest_ids, config.max_concurrent_exports, async (questId) => {
          let read: number;
          try {
            read = await readQuest(env.api, questId, env.stop, logger, async (items) => {
              const records = items.map((item) => invitationRecord(item, questId, treatments, config.hash_salt));
              count += records.length;
              await out.records(ref, records);
            });
          } catch (err) {
            const denied = findQuestInaccessible(err);
            if (!denied) throw err;
            const why = deniedMessage(questId, denied);
            if (config.skip_inaccessible_quests) return skipped(questId, why);
            throw new QuestInaccessible(questId, denied.status, why, {questId, stream: ref.name});
          }
          logger.info(`Stream ${ref.name}: quest ${questId}: ${plural(read, 'invitation')}`);
        });
        await out.state(ref, {}, count);
        return count;
      },
    };
  },
};

/** The error of a quest whose invitations the login may not read: what the service said, and what to do. */
function deniedMessage(questId: string, denied: QuestInaccessible): string {
  const {explanation, traceId, requestId} = errorContext(denied);
  const ids = supportIds(traceId, requestId);
  const answer = `HTTP ${denied.status}${explanation ? ` - ${String(explanation)}` : ''}${ids ? `; ${ids}` : ''}`;
  if (denied.status === 404)
    return `Stream ${INVITATIONS_STREAM}: the service does not know quest ${questId} (${answer}). Check its id in quest_ids.`;
  return `Stream ${INVITATIONS_STREAM}: the API login may not read the invitations of quest ${questId} (${answer}). Reading invitations needs its own permission: the responses streams do not, and still sync. Ask your Questback account owner to give the API login permission to read invitations, or deselect the ${INVITATIONS_STREAM} stream in the connection.`;
}

/** Reads of one quest's list at most: a second when the first saw the list move (pagedList's onGap). */
const PASSES = 2;

/**
 * Every invitation of one quest, each once, handed on a page at a time; resolves to how many. The
 * list's order is undocumented, and skip-based pages shift when it moves while it is read: a page
 * repeats items of the one before (invitations added at its front), or the read passes over items
 * (an invitation whose status changes moves to the end of a list ordered by the last change). The
 * pages overlap and the ids met are remembered for the quest's read (id-set.ts: about 20 to 40 bytes
 * per invitation), so each is emitted once; a move larger than the overlap costs a second read of
 * the list, and if that one moved too, a warning.
 */
async function readQuest(
  api: ListApi,
  questId: string,
  signal: AbortSignal,
  logger: AirbyteLogger,
  emit: (items: Invitation[]) => Promise<void>
): Promise<number> {
  const seen = new IdSet();
  /** Pages out of place in each read. */
  const moves: number[] = [];
  let firstRead = 0;
  const where = `Stream ${INVITATIONS_STREAM}: quest ${questId}`;
  for (let pass = 1; pass <= PASSES; pass++) {
    if (pass > 1) {
      logger.info(
        `${where}: the list's order moved while it was read (${plural(moves[0], 'page')} did not begin where the page before ended), so some invitations may have been passed over: reading the list once more (pass ${pass} of ${PASSES}); only invitations not met yet are emitted`
      );
    }
    let moved = 0;
    const options = {
      item: (raw: unknown) => invitationItem(raw, questId),
      key: (item: Invitation) => item.invitationId,
      onGap: () => moved++,
    };
    for await (const page of api.questList(questId, INVITATIONS_STREAM, options, signal)) {
      const fresh = page.filter((item) => seen.add(item.invitationId));
      if (fresh.length) await emit(fresh);
    }
    moves.push(moved);
    if (!moved) return seen.size;
    if (pass === 1) firstRead = seen.size;
  }
  logger.warn(
    `${where}: the service's order of the invitations list moved while it was read, in each of ${PASSES} reads (pages out of place: ${moves.join(', then ')}), so some of the quest's invitations may be missing from this sync: ${plural(seen.size, 'invitation')} read, of which the second read found ${plural(seen.size - firstRead, 'invitation')} the first had passed over. The service still holds them: the next sync reads them again. If this warning comes in every sync, the service orders the list differently in each request: tell Questback support.`
  );
  return seen.size;
}
