// Issue 33 points 2 and 5, in both layouts of every quest in one stream (combined, long), against the
// simulator: a quest whose file breaks at the same row in every sync (corruptRow) after more rows than
// a STATE may list. The other quests commit and their cursors pass their rows; the failing quest fails
// with its own error each sync; the rows it sends twice are exactly the number the log says. And the
// STATE's list of the rows it sent lets nobody confirm a dropped or hashed cell by hashing candidates:
// an attacker who knows every other byte of the row and the fingerprint algorithm, with the STATE and
// the records, matches no candidate; only the holder of the config's secret matches the true one. A
// hash_salt changed between a failed sync and the next degrades to matching by Response ID, said once.

import fs from 'fs';

import {csvText} from '../../simulator';
import {resumeSecret} from '../../src/core/keyed-hash';
import {FingerprintKey} from '../../src/sync/windows/resume';
// The fingerprint algorithm an attacker reads in the source.
import {rowPrint} from '../../src/sync/windows/resume/key-forms';
import {errorTraces, logLines, records, RunResult, stateFile} from '../helpers/connector';
import {withWorld} from '../helpers/fixtures';

const DAY = 86_400_000;
const [A, B, C] = [
  'f4e70000-0000-4000-8000-00000000000a',
  'f4e70000-0000-4000-8000-00000000000b',
  'f4e70000-0000-4000-8000-00000000000c',
];
/** The export settings the connector asks for (include_respondent_information on), as the simulator takes them. */
const SETTINGS = {includeRespondentInformation: true};

interface Listed {
  keys: string[];
  fingerprints?: string[];
  header?: string;
}

/** The Response IDs of a quest's records in a run, in order (one per row, whatever the layout). */
function idsOf(run: RunResult, questId: string): string[] {
  const ids = records(run.messages)
    .filter((r) => ['responses', 'answers'].includes(r.record.stream) && r.record.data.quest_id === questId)
    .map((r) => String(r.record.data.response_id));
  return ids.filter((id, i) => i === 0 || id !== ids[i - 1]);
}

/** The quests' entries of a stream's state after a run. */
function entries(run: RunResult, stream: string): Record<string, {cursor: string; emitted?: Listed}> {
  const state = stateFile(run.messages).find((s) => s.stream.stream_descriptor.name === stream);
  return (state?.stream.stream_state as unknown as {quests: Record<string, {cursor: string; emitted?: Listed}>}).quests;
}

const logs = (run: RunResult): string[] => logLines(run.messages).map((l) => l.message);

/** The line of `row` as the export writes it, with one cell replaced, and the forms a fingerprint may cover. */
function lineForms(header: string[], row: string[], cell: number, value: string): Buffer[] {
  const cells = row.map((v, i) => (i === cell ? value : v));
  const line = csvText(header, [cells], {bom: ''}).split('\r\n')[1];
  return [line, `${line}\r`, `${line}\r\n`, `${line}\n`].map((l) => Buffer.from(l, 'utf8'));
}

/** The fingerprint of `bytes` as the fingerprint algorithm makes it, in the STATE's text form before the fix. */
function unkeyedPrint(bytes: Buffer): string {
  const out = new Uint32Array(2);
  rowPrint(bytes, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), 0, bytes.length, out);
  const text = Buffer.alloc(8);
  text.writeUInt32LE(out[0], 0);
  text.writeUInt32LE(out[1], 4);
  return text.toString('base64url');
}

/** The layouts, each with sensitive columns: one hashes with a salt, the other drops without one. */
const LAYOUTS = [
  {
    layout: 'combined',
    stream: 'responses',
    sensitive: {
      sensitive_columns: [
        {column: 'E-mail', action: 'drop'},
        {column: 'Phone', action: 'hash'},
      ],
      hash_salt: 'Zq8#pV2m!xR7~k3Y9wL',
    },
  },
  // No hash_salt: the fingerprints are keyed by the client secret.
  {
    layout: 'long',
    stream: 'answers',
    sensitive: {
      sensitive_columns: [
        {column: 'E-mail', action: 'drop'},
        {column: 'Phone', action: 'drop'},
      ],
    },
  },
];

type Layout = (typeof LAYOUTS)[number];

interface Scenario {
  one: RunResult;
  two?: RunResult;
  config: string;
  truth(questId: string): {header: string[]; rows: string[][]};
  /** The Response IDs of rows that make records (in the long layout, those with a cell to send). */
  visible(rows: string[][]): string[];
}

/**
 * Quests A and C are healthy, B breaks at row `broken` of its `rows` (one cell too many) in every
 * download; A's and C's exports are ready long after B's, so they are read after B failed. Runs
 * `syncs` reads, each from the state of the one before.
 */
async function scenario(
  {layout, sensitive}: Layout,
  rows: number,
  broken: number,
  syncs: 1 | 2,
  check: (s: Scenario) => void
): Promise<void> {
  const first = Date.now() - 5 * DAY;
  await withWorld(
    {
      seed: 33,
      quests: [
        {id: A, rows: 40, columns: 1, firstCreatedAt: new Date(first).toISOString(), exportDurationMs: 120_000},
        {
          id: B,
          columns: 1,
          createdAt: Array.from({length: rows}, (_, r) => first + r * 1_000),
          corruption: 'ragged-row',
          corruptRow: broken,
          exportDurationMs: 1,
          exportMsPerThousandRows: 0,
        },
        {id: C, rows: 30, columns: 1, firstCreatedAt: new Date(first).toISOString(), exportDurationMs: 120_000},
      ],
    },
    async (world) => {
      const {sim} = world;
      const config = world.config({
        stream_layout: layout,
        quest_ids: [A, B, C],
        start_date: new Date(first - 3_600_000).toISOString(),
        window_days: 1,
        include_respondent_information: true,
        ...sensitive,
      });
      const catalog = await world.discoveredCatalog(config, 'incremental');
      const args = ['read', '--config', config, '--catalog', catalog];
      const one = await world.run(args);
      const two = syncs === 2 ? await world.run([...args, '--state', world.file(stateFile(one.messages))]) : undefined;
      const dropped = sensitive.sensitive_columns.filter((c) => c.action === 'drop').map((c) => c.column);
      const header = sim.groundTruth(B, SETTINGS).header;
      const kept = header.map((h, i) => (i > 1 && !dropped.includes(h) ? i : -1)).filter((i) => i >= 0);
      check({
        one,
        ...(two ? {two} : {}),
        config,
        truth: (q) => sim.groundTruth(q, SETTINGS),
        visible: (rs) => rs.filter((r) => layout !== 'long' || kept.some((i) => r[i])).map((r) => r[0]),
      });
    }
  );
}

/** The error each failed read of the scenario ends with: B's own. */
const bError = new RegExp(
  `1 of 3 quest\\(s\\) failed \\(${B}: The export of quest ${B} for window .* is not valid CSV`
);

describe.each(LAYOUTS)('$layout: a quest that breaks at the same row in every sync', (layout) => {
  const {stream} = layout;
  const entry = (run: RunResult) => entries(run, stream)[B].emitted as Listed;

  test('after more rows than a STATE may list: the others commit, it fails with its own error each sync, and the rows it sends twice are as many as the log says', async () => {
    await scenario(layout, 24_000, 20_000, 2, ({one, two, truth, visible}) => {
      if (!two) throw new Error('two syncs');
      for (const run of [one, two]) {
        expect(run.code).toBe(1);
        expect(errorTraces(run.messages).map((t) => t.trace.error?.message)).toEqual([expect.stringMatching(bError)]);
      }
      // The healthy quests: every row in the first sync, none again; their cursors passed them.
      for (const q of [A, C]) {
        const rows = truth(q).rows;
        expect(idsOf(one, q)).toEqual(visible(rows));
        expect(idsOf(two, q)).toEqual([]);
        for (const run of [one, two]) {
          expect(Date.parse(entries(run, stream)[q].cursor)).toBeGreaterThanOrEqual(
            Date.parse(rows[rows.length - 1][1])
          );
        }
      }
      // The broken quest: the rows before its broken row, more than a STATE lists; the rest of them come
      // again in the next sync, as many as the log said, and the same again after it.
      const rowsB = truth(B).rows;
      const said = (run: RunResult): {emitted: number; again: number} => {
        const pattern = new RegExp(
          `^Stream ${stream}: quest ${B} failed after emitting ([\\d,]+) rows of window .+ that no STATE has committed yet; more than a STATE may list \\([^)]+ of ids\\): the stream's next STATE lists the first of them, so the next sync skips those, and sends the other ([\\d,]+) rows of them again \\(duplicate records in an append destination; a deduplicating sync mode keeps one\\)\\. The other quests' STATEs go on\\.$`
        );
        const found = logs(run)
          .map((l) => pattern.exec(l))
          .filter((m) => m);
        expect(found).toHaveLength(1);
        const [, emitted, again] = found[0] as RegExpExecArray;
        return {emitted: Number(emitted.replace(/,/g, '')), again: Number(again.replace(/,/g, ''))};
      };
      const listed = entry(one);
      const first = said(one);
      expect(first.emitted).toBeLessThanOrEqual(20_000);
      expect(listed.keys.length).toBeGreaterThan(5_000);
      expect(first.again).toBe(first.emitted - listed.keys.length);
      expect(first.again).toBeGreaterThan(0);
      expect(listed.keys).toEqual(rowsB.slice(0, listed.keys.length).map((r) => r[0]));
      expect(idsOf(one, B)).toEqual(visible(rowsB.slice(0, first.emitted)));
      // The next sync: the listed rows skipped, exactly the others sent again, and said so again.
      expect(said(two)).toEqual({emitted: first.again, again: first.again});
      expect(idsOf(two, B)).toEqual(visible(rowsB.slice(listed.keys.length, first.emitted)));
      expect(entry(two).keys).toEqual(listed.keys);
    });
  }, 180_000);

  test("the STATE's list of the rows it sent confirms no dropped or hashed value to anyone who hashes candidates", async () => {
    await scenario(layout, 8_000, 6_000, 1, ({one, config, truth}) => {
      expect(one.code).toBe(1);
      const {header, rows} = truth(B);
      const listed = entry(one);
      expect(listed.keys.length).toBeGreaterThan(1_000);
      expect(listed.keys).toEqual(rows.slice(0, listed.keys.length).map((r) => r[0]));
      // For listed rows, every other byte of the row known (more than the records tell), the e-mail
      // (or the phone) replaced by each candidate: no fingerprint or digest in the STATE matches.
      const state = JSON.stringify(stateFile(one.messages));
      const texts = new Set(state.match(/[\w-]{11,}/g));
      const email = header.indexOf('E-mail');
      const phone = header.indexOf('Phone');
      const byId = new Map(rows.map((r) => [r[0], r]));
      const attacked = listed.keys.slice(0, 100).map((id) => byId.get(id) as string[]);
      const candidates = (cell: number) => [...new Set([...attacked.map((r) => r[cell]), 'x@example.com', ''])];
      const secret = new FingerprintKey(
        resumeSecret(
          (layout.sensitive as {hash_salt?: string}).hash_salt,
          (JSON.parse(fs.readFileSync(config, 'utf8')) as {client_secret: string}).client_secret
        )
      );
      const prints = listed.fingerprints ?? [];
      let owner = 0;
      for (const cell of [email, phone]) {
        expect(attacked.filter((r) => r[cell]).length).toBeGreaterThan(50);
        const matches: string[] = [];
        for (const row of attacked) {
          for (const value of candidates(cell)) {
            for (const bytes of lineForms(header, row, cell, value)) {
              const print = unkeyedPrint(bytes);
              if (texts.has(print)) matches.push(`${row[0]}: ${value}`);
              // The holder of the config's secret (and only they) confirms the true value: the
              // candidate lines are the row's bytes, and the fingerprint covers the cell.
              const words = Buffer.from(print, 'base64url');
              if (secret.print(words.readUInt32LE(0), words.readUInt32LE(4)) === prints[listed.keys.indexOf(row[0])]) {
                expect(value).toBe(row[cell]);
                owner++;
              }
            }
          }
        }
        expect(matches).toEqual([]);
      }
      expect(owner).toBe(2 * attacked.length);
      for (const row of attacked)
        for (const cell of [email, phone]) if (row[cell]) expect(state).not.toContain(row[cell]);
    });
  }, 120_000);
});

test('combined: a hash_salt changed between a failed sync and the next: the rows its state lists are skipped by Response ID, said once; nothing twice, nothing lost', async () => {
  const first = Date.now() - 5 * DAY;
  await withWorld(
    {
      seed: 34,
      quests: [
        {id: A, rows: 20, columns: 1, firstCreatedAt: new Date(first).toISOString(), exportDurationMs: 120_000},
        {id: B, columns: 1, createdAt: Array.from({length: 6_000}, (_, r) => first + r * 1_000), exportDurationMs: 1},
      ],
    },
    async (world) => {
      const {sim} = world;
      // B's downloads break at its 5,001st row (one cell too many) while `broken`: after some of its rows went out.
      let broken = true;
      sim.on('download', (ctx) => {
        if (ctx.questId !== B || !broken) return ctx.next();
        const lines = ctx.csv().split('\r\n');
        ctx.res.writeHead(200, {'Content-Type': 'text/csv; charset=utf-8'});
        ctx.res.end(`${lines.slice(0, 5_001).join('\r\n')}\r\n${lines[5_001]}|one cell too many\r\n`);
      });
      const overrides = {
        stream_layout: 'combined',
        quest_ids: [A, B],
        start_date: new Date(first - 3_600_000).toISOString(),
        window_days: 1,
        include_respondent_information: true,
        sensitive_columns: [{column: 'E-mail', action: 'hash'}],
      };
      const config = world.config({...overrides, hash_salt: 'Zq8#pV2m!xR7~k3Y9wL'});
      const catalog = await world.discoveredCatalog(config, 'incremental');
      const one = await world.run(['read', '--config', config, '--catalog', catalog]);
      expect(one.code).toBe(1);
      const listed = entries(one, 'responses')[B].emitted as Listed;
      const sent = idsOf(one, B);
      expect(sent.length).toBeGreaterThan(0);
      expect(listed.keys).toEqual(sent);
      broken = false;
      const rotated = world.config({...overrides, hash_salt: 'Wn4$uT6q^cJ1-r8Ph5sE'});
      const two = await world.run([
        'read',
        '--config',
        rotated,
        '--catalog',
        catalog,
        '--state',
        world.file(stateFile(one.messages)),
      ]);
      expect(two.code).toBe(0);
      const rows = sim.groundTruth(B, SETTINGS).rows.map((r) => r[0]);
      expect(idsOf(two, B)).toEqual(rows.slice(sent.length));
      expect(logs(two).filter((l) => /fingerprinted from a file of other export settings/.test(l))).toEqual([
        expect.stringMatching(
          new RegExp(
            `^Quest ${B}: the state lists ${sent.length.toLocaleString('en-US')} rows an earlier sync emitted past the cursor, .* or under another hash_salt \\(or client_secret, without a hash_salt\\); window .* skips them by Response ID alone\\.`
          )
        ),
      ]);
      expect(entries(two, 'responses')[B]).not.toHaveProperty('emitted');
    }
  );
}, 120_000);
