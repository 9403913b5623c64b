// Issue 19's and 25's limits against the hostile service: a gzip bomb that expands into one huge cell
// is cut to the bound with low memory (bin/main, whose peak memory is measured), its record says so,
// and the sync goes on; a read of many quests (in-process) raises no Node warning
// (MaxListenersExceededWarning came at 12 quests).

import zlib from 'zlib';

import {LIMITS} from '../../src/core/limits';
import {
  errorTraces,
  logLines,
  records,
  runConnector,
  startBinMain,
  states,
  tempDir,
  writeJson,
} from '../helpers/connector';
import {configuredCatalog, runtimeOf, streamOf} from '../helpers/fixtures';
import {peakRssProbe} from '../helpers/peak-rss';
import {
  catalogOf,
  expectOutcome,
  HEADER,
  hostileConfig,
  PATIENT,
  rowsBetween,
  runHostile,
  withServer,
} from '../helpers/hostile';
import {csvText} from '../../simulator';

const MIB = 1024 * 1024;
/**
 * The bomb's cell: 384 MiB of 'a' once decompressed, far beyond LIMITS.csv.maxCellChars (4 MiB), and
 * more than the memory bound below even before node's own 100 MiB: a connector that held the cell
 * could not stay under it. (It was 1 GiB: the same proof for almost three times the CPU.)
 */
const BOMB_MIB = 384;
/** Generous: node and the connector take about 100 MiB (150 MiB seen on a busy machine). */
const PEAK_RSS_MIB = 300;

/**
 * A gzip body of about 400 KB that expands into the rows given, then a row whose comment is BOMB_MIB
 * MiB of 'a': one gzip member per MiB of the cell (a gzip stream may be several members, and a
 * decoder reads them all), so the test never holds the expanded text.
 */
function gzipBomb(goodRows: string, bombRowStart: string, bombRowEnd: string): Buffer {
  const mib = zlib.gzipSync(Buffer.alloc(MIB, 'a'));
  return Buffer.concat([
    zlib.gzipSync(goodRows + bombRowStart),
    ...Array.from({length: BOMB_MIB}, () => mib),
    zlib.gzipSync(bombRowEnd),
  ]);
}

describe('hostile limits', () => {
  test.concurrent(
    'a 400 KB gzip body expanding into a 384 MiB cell: the cell cut to the bound with meta.changes, a warning naming the column and sizes, low memory, the sync complete',
    async () => {
      const quest = '0b0b0b0b-2fa1-41d2-883f-0016d3cca427';
      // A process of its own, so that its peak memory is the connector's: on the real clock.
      await withServer({quests: [quest], clock: 'real'}, async (server) => {
        let bodyBytes = 0;
        server.on('download', (ctx) => {
          const rows = ctx.rows();
          // The bomb lies inside the window, after rows that are sound.
          const created = rows[rows.length - 1][1];
          const body = gzipBomb(csvText(HEADER, rows), `R-bomb|${created}|`, '|3\r\n');
          bodyBytes = body.length;
          ctx.send(200, body, {'Content-Type': 'text/csv; charset=utf-8', 'Content-Encoding': 'gzip'});
        });
        const dir = tempDir('questback-bomb-');
        const config = hostileConfig(server, PATIENT);
        const rss = peakRssProbe();
        const live = startBinMain(
          [
            'read',
            '--config',
            writeJson(dir, 'config.json', config),
            '--catalog',
            writeJson(dir, 'catalog.json', catalogOf(server)),
          ],
          {env: rss.env, killAfterMs: 120_000}
        );
        const run = await live.done;
        const peakRssMiB = rss.peakMiB();
        // The setbacks (a download cut off, a window split), so that a run with more than one export says why.
        const setbacks = logLines(run.messages).filter((l) => l.level === 'WARN' && !/truncated/.test(l.message));
        process.stdout.write(
          `hostile-limits figures: gzip bomb of ${bodyBytes} bytes (${BOMB_MIB} MiB cell): peak RSS ${peakRssMiB.toFixed(0)} MiB, ${((run.exitedAt - live.startedAt) / 1000).toFixed(1)} s${setbacks.map((l) => `\n  ${l.message}`).join('')}\n`
        );

        const stream = streamOf(quest);
        const startMs = Date.parse(String(config.start_date));
        const bomb = records(run.messages).filter((r) => r.record.data.response_id === 'R-bomb');
        const cell = bomb.map((r) => Object.entries(r.record.data).find(([, v]) => String(v).startsWith('aaaa')));
        const warnings = logLines(run.messages).filter((l) => l.level === 'WARN' && /truncated/.test(l.message));
        expect({
          code: run.code,
          killed: run.killed,
          invalid: run.invalid,
          // One export: on a busy machine its download may be cut off by the progress floor and read
          // again (the bomb row still comes once).
          exports: server.exports().length,
          errors: errorTraces(run.messages).length,
          bombRows: bomb.length,
          kept: cell.map((c) => c && String(c[1]).length),
          meta: bomb.map((r) => r.record.meta),
          warnings: warnings.map((w) => w.message.replace(/window \S+ \S+/, 'window W')),
          cursorMoved: states(run.messages).some(
            (s) =>
              s.state.stream.stream_descriptor.name === stream &&
              Date.parse(String(s.state.stream.stream_state.cursor)) > startMs
          ),
          peakRssWithinBound: peakRssMiB <= PEAK_RSS_MIB || `${peakRssMiB.toFixed(0)} MiB`,
          stderr: run.stderr,
          // No cell text in a log line.
          cellEchoed: warnings.some((w) => w.message.includes('aaaaaaaaaa')),
        }).toEqual({
          code: 0,
          killed: false,
          invalid: [],
          exports: 1,
          errors: 0,
          bombRows: 1,
          kept: [LIMITS.csv.maxCellChars],
          meta: [{changes: [{field: cell[0]?.[0], change: 'TRUNCATED', reason: 'SOURCE_FIELD_SIZE_LIMITATION'}]}],
          warnings: [
            expect.stringMatching(
              new RegExp(
                `^Quest ${quest}: 1 cell\\(s\\) of .* were longer than the connector takes and were truncated \\(e\\.g\\. column "[^"]+": ${BOMB_MIB * MIB} characters, cut to ${LIMITS.csv.maxCellChars},`
              )
            ),
          ],
          cursorMoved: true,
          peakRssWithinBound: true,
          stderr: '',
          cellEchoed: false,
        });
      });
    },
    150_000
  );

  const MANY = 14;
  const manyQuests = Array.from({length: MANY}, (_, i) => `12121212-0000-4000-8000-${String(i).padStart(12, '0')}`);

  test.concurrent(
    `${MANY} quests in one read (per_quest): every row once, nothing on stderr (no MaxListenersExceededWarning)`,
    async () => {
      await withServer({quests: manyQuests}, async (server) => {
        const run = await runHostile(server, 'read', {killAfterMs: 120_000});
        expect(run.stderr).toBe('');
        expectOutcome(run, server, {code: 0, maxSeconds: 120, ok: manyQuests});
      });
    },
    150_000
  );

  test.concurrent(
    `${MANY} quests in one read (combined): every row once into responses, nothing on stderr`,
    async () => {
      await withServer({quests: manyQuests}, async (server) => {
        const dir = tempDir('questback-many-hostile-');
        const settings = hostileConfig(server, {stream_layout: 'combined'});
        const config = writeJson(dir, 'config.json', settings);
        const runtime = runtimeOf(server);
        const discover = await runConnector(['discover', '--config', config], {runtime});
        expect({code: discover.code, stderr: discover.stderr}).toEqual({code: 0, stderr: ''});
        const run = await runConnector(
          [
            'read',
            '--config',
            config,
            '--catalog',
            writeJson(dir, 'catalog.json', configuredCatalog(discover.messages, 'incremental')),
          ],
          {runtime, killAfterMs: 120_000}
        );
        const startMs = Date.parse(String(settings.start_date));
        const got = records(run.messages)
          .filter((r) => r.record.stream === 'responses')
          .map((r) => r.record.data as {quest_id: string; response_id: string})
          .map((d) => `${d.quest_id}/${d.response_id}`)
          .sort();
        const want = manyQuests
          .flatMap((q) => rowsBetween(server, q, startMs, server.clock.now()).map((r) => `${q}/${r[0]}`))
          .sort();
        expect({code: run.code, stderr: run.stderr, invalid: run.invalid}).toEqual({code: 0, stderr: '', invalid: []});
        expect(got).toEqual(want);
      });
    },
    150_000
  );
});
