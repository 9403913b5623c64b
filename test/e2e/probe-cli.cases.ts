// `bin/main probe` as a user runs it: protocol log lines only on stdout, the report in a file, and an
// exit code that says whether an assumption was contradicted (0 no, 3 yes, 1 the probe could not run).
// The command line runs in-process, as bin/main runs it (test/helpers/connector.ts; process.cases.ts
// shows exit codes reaching the shell); the verdicts are tested on the probe itself (test/probe).

import fs from 'fs';
import path from 'path';

import {exited, ROOT, spawnBinMain} from '../../harness/bin-main';
import {secretForms} from '../../src/core/secrets';
import {Simulator, SimulatorOptions, startSimulator} from '../../simulator';
import {errorTraces, ofType, runConnector, RunResult, tempDir, writeJson} from '../helpers/connector';
import {simConfig} from '../helpers/fixtures';

const QUEST = 'b0b0b0b0-0000-4000-8000-000000000002';
const OTHER = 'b0b0b0b0-0000-4000-8000-000000000003';

async function simulator(options: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({
    seed: 3,
    exportDurationMs: 200,
    quests: [
      // More than a page of invitations, so that the probe can tell whether take is honoured up to 1000.
      {id: QUEST, rows: 40, invitations: 1100, firstCreatedAt: new Date(Date.now() - 2 * 86_400_000).toISOString()},
      {id: OTHER, rows: 5, forbidden: true},
    ],
    ...options,
  });
}

const logs = (r: RunResult): {level: string; message: string}[] =>
  ofType<{log: {level: string; message: string}}>(r.messages, 'LOG').map((m) => m.log);

async function probe(sim: Simulator, args: string[] = [], config: Record<string, unknown> = {}) {
  const dir = tempDir();
  const report = path.join(dir, 'report.md');
  const result = await runConnector([
    'probe',
    '--config',
    writeJson(dir, 'config.json', simConfig(sim, {quest_ids: [QUEST, OTHER], ...config})),
    '--report',
    report,
    ...args,
  ]);
  return {result, report: fs.existsSync(report) ? fs.readFileSync(report, 'utf8') : undefined, file: report};
}

describe('bin/main probe', () => {
  test('a service as the connector assumes: exit 0, log lines only, every verdict logged, the report written', async () => {
    // Exports that take over a second: the polls see status records even on a busy machine.
    const sim = await simulator({faults: {rateLimit: {limit: 500, windowMs: 60_000}}, exportDurationMs: 1200});
    try {
      const {result, report, file} = await probe(sim);
      expect(result.invalid).toEqual([]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.messages.every((m) => m.type === 'LOG')).toBe(true);
      const lines = logs(result).map((l) => l.message);
      expect(lines.filter((l) => /^Probe: (CONFIRMED|CONTRADICTED|UNKNOWN) /.test(l))).toHaveLength(33);
      expect(lines[lines.length - 1]).toBe(
        `Probe finished: 33 confirmed, 0 contradicted, 0 unknown. Report, safe to send to Questback support: ${file}`
      );
      expect(report).toMatch(/^# Questback export API: probe report\n/);
      expect(report).toContain('**33 confirmed, 0 contradicted, 0 unknown.**');
      for (const form of secretForms(sim.clientSecret, sim.clientId)) expect(report).not.toContain(form);
      for (const token of sim.issuedTokens()) expect(result.stdout + report).not.toContain(token);
      // The waits are visible while they happen.
      expect(
        lines.some((l) => /waiting for export .* polling every 500 ms to 10\.0 s, for at most 5\.0 min/.test(l))
      ).toBe(true);
    } finally {
      await sim.close();
    }
  });

  test('a contradicted assumption: exit 3, a warning, and the report says what to do', async () => {
    const sim = await simulator({dialect: {untilExclusive: true}});
    try {
      const {result, report} = await probe(sim, ['--minutes', '2']);
      expect(result.code).toBe(3);
      expect(logs(result)).toContainEqual({
        level: 'WARN',
        message:
          'Probe: CONTRADICTED filter.until-inclusive: the response created exactly at `until` was not in the export',
      });
      expect(report).toContain('## Contradicted, and what to do\n\n### `filter.until-inclusive`');
      expect(report).toMatch(/- What to do: A response created exactly at the end of a window is in neither window/);
    } finally {
      await sim.close();
    }
  });

  test('a service that refuses every export: exit 1, "could not run" and why, no verdicts and no report', async () => {
    const sim = await simulator({faults: {refuseCreates: 400}});
    try {
      const {result, report} = await probe(sim);
      expect(result.code).toBe(1);
      const errors = errorTraces(result.messages);
      expect(errors).toHaveLength(1);
      expect(errors[0].trace.error).toMatchObject({
        failure_type: 'config_error',
        message: expect.stringMatching(
          new RegExp(
            `^The probe could not run: the service refused all 3 export\\(s\\) of quest ${QUEST} it was asked for, so nothing about exports, their files and their filters could be checked\\. The first refusal: Creating an export for quest ${QUEST} failed: HTTP 400 - `
          )
        ),
      });
      // Nothing is counted or judged of what did not happen.
      expect(
        logs(result).filter((l) => /^Probe: (CONFIRMED|CONTRADICTED|UNKNOWN) |^Probe finished/.test(l.message))
      ).toEqual([]);
      expect(report).toBeUndefined();
      expect(sim.exports()).toEqual([]);
    } finally {
      await sim.close();
    }
  });

  test('an export the service did not make is counted apart from those it made', async () => {
    const sim = await simulator({exportDurationMs: 1200});
    try {
      sim.on('create', (ctx) => (ctx.n === 1 ? ctx.next() : ctx.problem(400, 'No more exports of this quest today')));
      const {result, report} = await probe(sim);
      expect(result.code).not.toBe(1);
      expect(sim.exports()).toHaveLength(1);
      expect(report).toMatch(/\| Exports \| 1 of [23] asked for \|/);
    } finally {
      await sim.close();
    }
  });

  test('cannot run: exit 1 with an error trace, and no report', async () => {
    const sim = await simulator();
    try {
      // The quest in braces and upper case, as Windows tools copy a GUID: it is the forbidden one.
      const forbidden = await probe(sim, ['--quest', `{${OTHER.toUpperCase()}}`]);
      expect(forbidden.result.code).toBe(1);
      expect(errorTraces(forbidden.result.messages)[0].trace.error?.message).toMatch(
        new RegExp(
          `Quest ${OTHER} cannot be probed: Creating an export for quest ${OTHER} failed: HTTP 403 .* Probe a quest the API login can read: --quest <id>`
        )
      );

      const before = sim.stats().requests;
      const unwritable = await probe(sim, ['--report', path.join(tempDir(), 'missing', 'report.md')]);
      expect(unwritable.result.code).toBe(1);
      expect(errorTraces(unwritable.result.messages)[0].trace.error?.message).toMatch(
        /Cannot write the report to (.*)\/missing\/report\.md: folder not found \(\1\/missing\); pass --report <path>\./
      );
      expect(sim.stats().requests).toBe(before);

      const bare = writeJson(
        tempDir(),
        'config.json',
        '{\n  "client_id": "x",\n  "client_secret": sim-secret-7Qe2\n}\n'
      );
      const unquoted = await runConnector(['probe', '--config', bare]);
      expect(unquoted.code).toBe(1);
      expect(errorTraces(unquoted.messages)[0].trace.error?.message).toBe(
        `The config file ${bare} is not valid JSON at line 3, column 20: a value was expected here (text in double quotes, a number, true, false, null, an object or a list); text values need double quotes.`
      );
      expect(unquoted.stdout).not.toMatch(/sim-secret|7Qe2/);

      const wrongSecret = await probe(sim, [], {client_secret: 'not-the-secret-at-all'});
      expect(wrongSecret.result.code).toBe(1);
      expect(errorTraces(wrongSecret.result.messages)[0].trace.error).toMatchObject({
        failure_type: 'config_error',
        message: expect.stringMatching(/rejected the API login \(HTTP 401/),
      });
    } finally {
      await sim.close();
    }
  });

  test.each([
    [
      ['--minutes', '0'],
      /^error: option '--minutes <n>' argument '0' is invalid\. --minutes must be a number from 1 to 30\.\n$/,
    ],
    [
      ['--minutes', 'ten'],
      /^error: option '--minutes <n>' argument 'ten' is invalid\. --minutes must be a number from 1 to 30\.\n$/,
    ],
    [
      ['--quest', 'b0b0b0b0-0000-4000-8000-0000000000ff'],
      /^error: option '--quest <id>' argument "b0b0b0b0-0000-4000-8000-0000000000ff" is not one of quest_ids in \S+config\.json \(b0b0b0b0-0000-4000-8000-000000000002, b0b0b0b0-0000-4000-8000-000000000003\)\.\n$/,
    ],
  ])(
    'a mistake on the command line (%j) is said on stderr, not as a trace: exit 1, no request, no report',
    async (args, said) => {
      const sim = await simulator();
      try {
        const {result, report} = await probe(sim, args);
        expect({code: result.code, stdout: result.stdout, requests: sim.stats().requests}).toEqual({
          code: 1,
          stdout: '',
          requests: 0,
        });
        expect(result.stderr).toMatch(said);
        expect(report).toBeUndefined();
      } finally {
        await sim.close();
      }
    }
  );

  test('--help lists the exit codes, 3 for a contradicted assumption', async () => {
    const help = await runConnector(['probe', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /\nExit codes:\n {2}0 {2}the probe ran and nothing was contradicted\n {2}3 {2}at least one assumption was contradicted: the report says which, and what to do\n {2}1 {2}the probe could not run/
    );
  });

  test('without --report, the report goes to probe-output/ in the current folder (made if missing), which .gitignore lists', async () => {
    const sim = await simulator();
    const dir = tempDir();
    try {
      const config = writeJson(dir, 'config.json', simConfig(sim, {quest_ids: [QUEST]}));
      const child = spawnBinMain(['probe', '--config', config], {cwd: dir, stdio: ['ignore', 'pipe', 'pipe']});
      let stdout = '';
      child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      const {code} = await exited(child);
      const file = path.join(dir, 'probe-output', 'probe-report.md');
      expect({code, written: fs.existsSync(file)}).toEqual({code: 0, written: true});
      expect(fs.readFileSync(file, 'utf8')).toMatch(/^# Questback export API: probe report\n/);
      expect(stdout).toContain(`Report, safe to send to Questback support: ${file}`);
    } finally {
      await sim.close();
    }
    const ignored = fs.readFileSync(path.join(ROOT, '.gitignore'), 'utf8').split('\n');
    expect(ignored).toContain('/probe-output/');
  });
});
