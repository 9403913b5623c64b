// Issue 24's last point: a service that lists one Response ID on two rows of one export file (two
// responses, different answers) and, after a cut-off, lists the two in the other order. Resume
// skips a row only if its Response ID and the fingerprint of its bytes were emitted, so each of the
// two rows goes out once; a line repeated byte for byte goes out as often as the file lists it. In
// process against the simulator's `repeatedIds` switch, per layout, with the exact rows, exit code
// and log line; and the STATE's list of a failed quest's rows (combined, long) in its new and old form.

import {createEngine, csvText} from '../../simulator';
import {CsvReadOptions, readCsv} from '../../src/csv/reader';
import {RowBatch, rowStrings} from '../../src/csv/rows';
import {emittedOf} from '../../src/sync/state/stream-state';
import {FingerprintKey, IdentityResume} from '../../src/sync/windows/resume';
import {logLines, records, RunResult} from '../helpers/connector';
import {responses} from '../helpers/combined';
import {answerRecords} from '../helpers/long';
import {simCatalog, streamOf, World, withWorld} from '../helpers/fixtures';

const DAY = 86_400_000;
const Q = 'd0240000-0000-4000-8000-000000000024';

/** The answer to a download whose connection closes after `cut` bytes of `body` (a length-delimited cut-off). */
function cutOff(body: string, cut: number): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  const head = `HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: ${bytes.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes.subarray(0, cut)]);
}

/**
 * The first download of the quest is cut a few bytes into its second row. Every later download is
 * the service's own; with `listed`, every download lists the rows it makes of the export's instead.
 */
function cutInSecondRow(world: World, listed?: (rows: string[][]) => string[][]): void {
  world.sim.on('download', (ctx) => {
    const rows = listed ? listed(ctx.rows()) : ctx.rows();
    if (ctx.n > 1)
      return listed ? ctx.send(200, csvText(ctx.header(), rows), {'Content-Type': 'text/csv'}) : ctx.next();
    const first = Buffer.byteLength(csvText(ctx.header(), rows.slice(0, 1)));
    ctx.raw(cutOff(csvText(ctx.header(), rows), first + 4));
  });
}

/** A quest of six responses in three pairs, each pair under one Response ID (the switch at 1: every pair). */
const SIX_IN_PAIRS = {
  seed: 24,
  exportDurationMs: 10,
  quests: [{id: Q, rows: 6, columns: 2, repeatedIds: 1, firstCreatedAt: new Date(Date.now() - 2 * DAY).toISOString()}],
};

/** The rows of the truth, as [Response ID, Created], in the order `order` lists them. */
const truthRows = (world: World, order: number[]): string[][] =>
  order.map((i) => world.sim.groundTruth(Q).rows[i].slice(0, 2));

const redownloads = (run: RunResult): string[] =>
  logLines(run.messages)
    .map((l) => l.message)
    .filter((m) => /downloading it again/.test(m));

const threeDaysAgo = (): string => new Date(Date.now() - 3 * DAY).toISOString();

/** An incremental per_quest read of the quest from three days back. */
const readPerQuest = (world: World): Promise<RunResult> =>
  world.run([
    'read',
    '--config',
    world.config({start_date: threeDaysAgo()}),
    '--catalog',
    world.file(simCatalog(world.sim, [Q], 'incremental')),
  ]);

/** An incremental read of the layout's stream of every quest, from three days back, with the catalog discover gives. */
async function readLayout(world: World, layout: 'combined' | 'long'): Promise<RunResult> {
  const config = world.config({stream_layout: layout, start_date: threeDaysAgo()});
  return world.run(['read', '--config', config, '--catalog', await world.discoveredCatalog(config, 'incremental')]);
}

describe('one Response ID on two rows of a file, listed in the other order after a cut-off', () => {
  test('per_quest: each of the two rows once, exit 0', async () => {
    await withWorld(SIX_IN_PAIRS, async (world) => {
      const truth = world.sim.groundTruth(Q).rows;
      expect(truth.map((r) => r[0])).toEqual([0, 0, 2, 2, 4, 4].map((i) => truth[i][0]));
      cutInSecondRow(world);
      const run = await readPerQuest(world);
      const got = records(run.messages)
        .filter((r) => r.record.stream === streamOf(Q))
        .map((r) => [String(r.record.data.response_id), String(r.record.data.created)]);
      expect({code: run.code, redownloads: redownloads(run), got}).toEqual({
        code: 0,
        redownloads: [expect.stringMatching(/downloading it again, skipping the 1 row of this window already emitted/)],
        // Row 0 from the cut file; then the service's second download, every pair in the other order: 1, (0), 3, 2, 5, 4.
        got: truthRows(world, [0, 1, 3, 2, 5, 4]),
      });
    });
  });

  test('combined: each of the two rows once, exit 0', async () => {
    await withWorld(SIX_IN_PAIRS, async (world) => {
      cutInSecondRow(world);
      const run = await readLayout(world, 'combined');
      const got = responses(run).map((r) => [r.response_id, String(r.created)]);
      expect({code: run.code, redownloads: redownloads(run).length, got}).toEqual({
        code: 0,
        redownloads: 1,
        got: truthRows(world, [0, 1, 3, 2, 5, 4]),
      });
    });
  });

  test('long: the answers of each of the two rows once, exit 0', async () => {
    await withWorld(SIX_IN_PAIRS, async (world) => {
      cutInSecondRow(world);
      const run = await readLayout(world, 'long');
      const {header, rows} = world.sim.groundTruth(Q);
      // Every non-empty answer of every row once: [Response ID, Created, header, value].
      const want = rows.flatMap((row) =>
        header.slice(2).flatMap((text, i) => (row[i + 2] === '' ? [] : [[row[0], row[1], text, row[i + 2]]]))
      );
      const got = answerRecords(run).map((a) => [a.response_id, String(a.created), a.header, a.value]);
      expect({code: run.code, redownloads: redownloads(run).length, got: got.sort()}).toEqual({
        code: 0,
        redownloads: 1,
        got: want.sort(),
      });
    });
  });

  test('a line repeated byte for byte is sent as often as the file lists it, across a cut inside the second copy', async () => {
    await withWorld({...SIX_IN_PAIRS, quests: [{...SIX_IN_PAIRS.quests[0], repeatedIds: 0}]}, async (world) => {
      // Row 0 twice, then the rest: the cut falls inside the second copy of row 0.
      cutInSecondRow(world, (rows) => [rows[0], ...rows]);
      const run = await readPerQuest(world);
      const got = records(run.messages).map((r) => [String(r.record.data.response_id), String(r.record.data.created)]);
      expect({code: run.code, redownloads: redownloads(run).length, got}).toEqual({
        code: 0,
        redownloads: 1,
        got: truthRows(world, [0, 0, 1, 2, 3, 4, 5]),
      });
    });
  });
});

const CSV: CsvReadOptions = {separator: '|'};

/** The rows `resume` lets through of a file of `lines` (a header first), as their cells. */
async function fresh(resume: IdentityResume, lines: string[]): Promise<string[][]> {
  const kept: string[][] = [];
  resume.startFile();
  await readCsv(
    (async function* () {
      yield Buffer.from(`${lines.join('\r\n')}\r\n`);
    })(),
    CSV,
    {
      header: () => undefined,
      rows: (batch: RowBatch) => {
        kept.push(...rowStrings(resume.fresh(batch)));
        return undefined;
      },
      progress: () => undefined,
    }
  );
  return kept;
}

describe("the STATE's list of a failed quest's rows (combined, long)", () => {
  const header = 'Response ID|Created|Q1';
  const a = '100|2026-11-20T10:00:00.000Z|first answer';
  const b = '100|2026-11-20T10:05:00.000Z|second answer';
  const c = '200|2026-11-20T10:10:00.000Z|other';
  const key = new FingerprintKey(Buffer.from('a secret of the test'));
  const digest = (settings: string, line: string) => key.file(settings, line.split('|'));

  test('lists each Response ID with the fingerprint of its row; the next read skips that row only, in any order', async () => {
    const failed = new IdentityResume(0, key);
    expect(await fresh(failed, [header, a])).toEqual([a.split('|')]);
    const {listed, unlisted} = failed.emittedKeys();
    failed.close();
    expect(unlisted).toBe(0);
    expect(listed).toEqual({keys: ['100'], fingerprints: [expect.stringMatching(/^[\w-]{11}$/)], header: ''});
    const next = new IdentityResume(0, key, {before: listed});
    expect(await fresh(next, [header, b, a, c])).toEqual([b.split('|'), c.split('|')]);
    next.close();
  });

  test('fingerprints of a file of another header or other settings count by id alone: a survey edited between the failed sync and the next sends no row twice', async () => {
    const settings = 'settings-digest';
    const failed = new IdentityResume(0, key, {file: digest(settings, header)});
    expect(await fresh(failed, [header, a])).toEqual([a.split('|')]);
    const {listed} = failed.emittedKeys();
    failed.close();
    expect(listed.header).toBe(digest(settings, header));
    // The survey gained a question: every row's bytes changed, row a's included.
    const edited = [`${header}|Q2`, `${a}|`, `${c}|new`];
    const next = new IdentityResume(0, key, {before: listed, file: digest(settings, edited[0])});
    expect(await fresh(next, edited)).toEqual([edited[2].split('|')]);
    next.close();
    // Other export settings (the same header): by id alone too.
    const sameHeader = new IdentityResume(0, key, {before: listed, file: digest('other-settings', header)});
    expect(await fresh(sameHeader, [header, a.replace('first', 'FIRST'), c])).toEqual([c.split('|')]);
    sameHeader.close();
  });

  test('fingerprints listed under another secret (hash_salt changed, or client_secret without a salt) count by id alone: nothing twice, nothing lost', async () => {
    const failed = new IdentityResume(0, key, {file: digest('s', header)});
    expect(await fresh(failed, [header, a, c])).toEqual([a.split('|'), c.split('|')]);
    const {listed} = failed.emittedKeys();
    failed.close();
    const rotated = new FingerprintKey(Buffer.from('the secret after a rotation'));
    const file = rotated.file('s', header.split('|'));
    expect(file).not.toBe(listed.header);
    const next = new IdentityResume(0, rotated, {before: listed, file});
    expect(await fresh(next, [header, c, a, '300|2026-11-20T10:20:00.000Z|new'])).toEqual([
      ['300', '2026-11-20T10:20:00.000Z', 'new'],
    ]);
    next.close();
  });

  test('a state written before fingerprints: its id stands for one row of that id, the first met (as it did)', async () => {
    const next = new IdentityResume(0, key, {before: {keys: ['100']}});
    expect(await fresh(next, [header, b, a, c])).toEqual([a.split('|'), c.split('|')]);
    next.close();
  });

  test('fingerprints that are not one text per key: an invalid state, named', () => {
    const state = {emitted: {until: '2026-11-20T11:00:00.000Z', keys: ['100', '200'], fingerprints: ['x']}};
    expect(() => emittedOf(state, 'responses')).toThrow(
      /^Invalid state: the 'emitted' rows of responses list 'fingerprints' that are not one text per key\./
    );
  });
});

describe("the simulator's repeatedIds switch", () => {
  const start = new Date(Date.now() - DAY).toISOString();

  test('at 0.5, a seeded half of the pairs share an id, alike in the truth and in an export; the other rows keep their own', () => {
    const engine = createEngine({
      seed: 7,
      quests: [{id: Q, rows: 400, columns: 1, repeatedIds: 0.5, firstCreatedAt: start}],
    });
    const ids = engine.groundTruth(Q).rows.map((r) => r[0]);
    const shared = Array.from({length: 200}, (_, j) => ids[2 * j] === ids[2 * j + 1]).filter(Boolean).length;
    expect({distinct: new Set(ids).size, shared: shared > 70 && shared < 130}).toEqual({
      distinct: 400 - shared,
      shared: true,
    });
    expect(engine.exportRows(Q, {until: Date.now()}).map((r) => r[0])).toEqual(ids);
  });

  test.each([
    [{repeatedIds: 1.5}, /^quest d024.*: repeatedIds must lie in \[0, 1\]$/],
    [{repeatedIds: 1, corruption: 'cut-last-cell' as const}, /repeatedIds and cut-last-cell do not go together/],
    [
      {repeatedIds: 1, rows: undefined, table: {header: ['Response ID', 'Created'], rows: [['1', start]]}},
      /a table quest takes no repeatedIds/,
    ],
  ])('refused: %j', (quest, message) => {
    expect(() => createEngine({quests: [{id: Q, rows: 4, ...quest}]})).toThrow(message);
  });
});
