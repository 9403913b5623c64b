// What only a process of its own shows, so bin/main runs here: the protocol alone on stdout, exit
// codes, a stop on SIGTERM and SIGINT, and a stdout closed early. The rest of the suite runs the same
// command line in-process (test/helpers/connector.ts startConnector).

import {spawn} from 'child_process';
import * as fs from 'fs';

import {binMainArgv} from '../../harness/bin-main';
import {errorTraces, runBinMain} from '../helpers/connector';
import {streamOf, withWorld} from '../helpers/fixtures';
import {catalogOf, expectOutcome, launch, withServer} from '../helpers/hostile';
import {systemClock} from '../../simulator';

const HANG_S = 60;
const KILL_MS = (HANG_S + 5) * 1000;
const TEST_MS = KILL_MS + 30_000;
const A = 'aaaaaaaa-1111-4111-8111-00000000000a';
const B = 'bbbbbbbb-2222-4222-8222-00000000000b';

describe('bin/main as a process', () => {
  test.concurrent(
    'spec and a check speak the protocol alone on stdout, exit 0; a usage error exits non-zero with stdout empty',
    async () => {
      await withWorld({seed: 3, clock: systemClock, quests: [{id: A, rows: 2}]}, async (world) => {
        const spec = await runBinMain(['spec']);
        expect({
          code: spec.code,
          invalid: spec.invalid,
          types: spec.messages.map((m) => m.type),
          stderr: spec.stderr,
        }).toEqual({
          code: 0,
          invalid: [],
          types: ['SPEC'],
          stderr: '',
        });
        const check = await runBinMain(['check', '--config', world.config()]);
        expect({code: check.code, invalid: check.invalid, stderr: check.stderr}).toEqual({
          code: 0,
          invalid: [],
          stderr: '',
        });
        expect(check.messages.filter((m) => m.type === 'CONNECTION_STATUS')).toEqual([
          {type: 'CONNECTION_STATUS', connectionStatus: {status: 'SUCCEEDED'}},
        ]);
        const usage = await runBinMain(['read', '--config', world.config()]);
        expect({code: usage.code, stdout: usage.stdout}).toEqual({code: 1, stdout: ''});
        expect(usage.stderr).toMatch(/required option '--catalog <path>' not specified/);
      });
    }
  );

  test.concurrent(
    'SIGTERM after the first stream committed its STATE stops the read on its own (before its grace runs out) with a non-zero code and a "stopped" error TRACE, keeping that stream complete',
    async () => {
      await withServer({quests: [A, B], clock: 'real'}, async (server) => {
        server.on('status', (ctx) => (ctx.questId === B ? ctx.jobStatus('PENDING') : ctx.next()));
        const {live, done} = launch(server, 'read', {
          catalog: catalogOf(server, [A, B]),
          killAfterMs: KILL_MS,
          process: true,
        });
        // A's STATE after its window was read (the one written when its export was created still lists the export).
        const stateOfA = await live.waitForLine((m) => {
          const stream = (
            m as {state?: {stream?: {stream_descriptor?: {name?: string}; stream_state?: {exports?: unknown}}}}
          ).state?.stream;
          return m.type === 'STATE' && stream?.stream_descriptor?.name === streamOf(A) && !stream.stream_state?.exports;
        }, HANG_S * 1000);
        const runningThen = live.exitedAt === undefined;
        live.kill('SIGTERM');
        const run = await done;
        const lastErrors = errorTraces(run.messages.slice(-8)).map((t) => t.trace.error?.message ?? '');
        // The "stopped" trace is written only when the read ended on its own: had the grace of
        // LIMITS.stopGraceMs run out, the process would have exited without it. No wall bound needed.
        expect({
          stateOfA: stateOfA !== undefined,
          runningAtStateOfA: runningThen,
          signal: run.signal,
          stoppedTraceAmongLastLines: lastErrors.some((m) => /stopped|SIGTERM|terminated/i.test(m)) || lastErrors,
        }).toEqual({
          stateOfA: true,
          runningAtStateOfA: true,
          signal: null,
          stoppedTraceAmongLastLines: true,
        });
        expectOutcome(run, server, {
          code: 'nonzero',
          maxSeconds: HANG_S,
          failure: {type: /^(transient_error|system_error)$/, message: /stopped|SIGTERM|terminated/i},
          ok: [A],
          failed: [B],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'SIGINT stops a read the same way, with exit code 130 and a "stopped" error TRACE',
    async () => {
      await withServer({quests: [A], clock: 'real'}, async (server) => {
        server.on('status', (ctx) => ctx.jobStatus('PENDING'));
        const {live, done} = launch(server, 'read', {killAfterMs: KILL_MS, process: true});
        expect(
          await live.waitForLine((m) => m.type === 'LOG' && /is PENDING/.test(JSON.stringify(m)), HANG_S * 1000)
        ).toBeDefined();
        live.kill('SIGINT');
        const run = await done;
        expect({code: run.code, invalid: run.invalid, stderr: run.stderr}).toEqual({
          code: 130,
          invalid: [],
          stderr: '',
        });
        expect(errorTraces(run.messages).map((t) => t.trace.error?.message)).toEqual([
          expect.stringMatching(/The sync was stopped \(SIGINT\)/),
        ]);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'a read whose stdout is closed early (bin/main read … | head -5) stops quietly: exit 141 as for SIGPIPE, nothing on stderr',
    async () => {
      // About 3 MB of records: far more than a pipe holds once its reader is gone.
      await withWorld(
        {
          seed: 11,
          clock: systemClock,
          exportDurationMs: 50,
          quests: [{id: 'c105ed00-0000-4000-8000-000000000001', rows: 2000}],
        },
        async (world) => {
          const config = world.config();
          const catalog = await world.discoveredCatalog(config, 'full_refresh');
          const child = spawn(process.execPath, binMainArgv(['read', '--config', config, '--catalog', catalog]), {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          const stderr: Buffer[] = [];
          child.stderr.on('data', (d: Buffer) => stderr.push(d));
          let lines = 0;
          // Like head -5: take five lines, then close the pipe.
          child.stdout.on('data', (d: Buffer) => {
            for (let i = d.indexOf(10); i !== -1 && lines < 5; i = d.indexOf(10, i + 1)) lines++;
            if (lines >= 5) child.stdout.destroy();
          });
          const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
          expect(lines).toBe(5);
          expect(Buffer.concat(stderr).toString('utf8')).toBe('');
          expect(code).toBe(141);
        }
      );
    }
  );

  // A disk that is full: /dev/full fails every write with ENOSPC (Linux; the case is skipped where it is missing).
  (fs.existsSync('/dev/full') ? test.concurrent : test.skip)(
    'a read whose stdout cannot be written (a full disk) says so on stderr and exits 1',
    async () => {
      await withWorld(
        {
          seed: 12,
          clock: systemClock,
          exportDurationMs: 50,
          quests: [{id: 'c105ed00-0000-4000-8000-000000000002', rows: 50}],
        },
        async (world) => {
          const config = world.config();
          const catalog = await world.discoveredCatalog(config, 'full_refresh');
          const full = fs.openSync('/dev/full', 'w');
          try {
            const child = spawn(process.execPath, binMainArgv(['read', '--config', config, '--catalog', catalog]), {
              stdio: ['ignore', full, 'pipe'],
            });
            const stderr: Buffer[] = [];
            child.stderr?.on('data', (d: Buffer) => stderr.push(d));
            const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
            expect(Buffer.concat(stderr).toString('utf8')).toBe(
              'Cannot write to stdout (ENOSPC); nothing more is written and the read stops. Check the disk or the pipe the output goes to.\n'
            );
            expect(code).toBe(1);
          } finally {
            fs.closeSync(full);
          }
        }
      );
    }
  );
});
