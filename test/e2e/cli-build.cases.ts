// bin/main before a build, during one, and without its modules: one line on stderr saying what to
// run, a non-zero exit, nothing on stdout, never a stack. And `npm run build` (scripts/build-lib.js)
// keeps the previous lib/ until the new one is whole. And `npm run demo`'s command line. Each case runs a copy of bin/main in a folder of
// its own, so the project's lib/ (which other tests use) is never touched.

import {spawn} from 'child_process';
import fs from 'fs';
import path from 'path';

import {Writable} from 'stream';

import {startSimulator} from '../../simulator';
import {mainCommand} from '../../src/index';
import {Host} from '../../src/protocol/cli';
import {tempDir} from '../helpers/connector';
import {withWorld} from '../helpers/fixtures';

const ROOT = path.resolve(__dirname, '..', '..');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], {
      cwd,
      env: {...process.env, LOG_LEVEL: '', ...env},
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({code, stdout, stderr}));
  });
}

/** A project folder holding a copy of bin/main, and whatever `files` says. */
function project(files: Record<string, string> = {}): string {
  const dir = tempDir('questback-bin-');
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.copyFileSync(path.join(ROOT, 'bin', 'main'), path.join(dir, 'bin', 'main'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), {recursive: true});
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const main = (dir: string, args: string[] = ['spec']): Promise<Ran> => run(path.join(dir, 'bin', 'main'), args, dir);

/** A compiled connector that only says which build it is. */
const stubBuild = (name: string): string =>
  `exports.mainCommand = () => ({parseAsync: async () => void process.stdout.write(${JSON.stringify(`${name}\n`)})});\n`;

/** One line, on stderr only, with no stack frame. */
function expectOneLine(ran: Ran, message: RegExp): void {
  expect(ran.code).toBe(1);
  expect(ran.stdout).toBe('');
  expect(ran.stderr).toMatch(/^bin\/main: [^\n]*\n$/);
  expect(ran.stderr).toMatch(message);
  expect(ran.stderr).not.toMatch(/\bat .*:\d+:\d+|Require stack|node:internal/);
}

describe('bin/main without a usable build', () => {
  test('no lib/: says to run npm run build', async () => {
    const dir = project();
    expectOneLine(
      await main(dir),
      /the connector is not built: run `npm run build` in .* \(after `npm ci`\), then this command again\./
    );
  });

  test('no lib/ while a build runs (its folder belongs to a live process): says to wait for it', async () => {
    const dir = project();
    fs.mkdirSync(path.join(dir, `lib.build-${process.pid}`));
    expectOneLine(
      await main(dir, ['check', '--config', 'x.json']),
      /being built right now \(npm run build\); run this command again when it has finished/
    );
  });

  test('the folder of a build that was killed does not count as a build under way', async () => {
    const dir = project();
    fs.mkdirSync(path.join(dir, 'lib.build-2147483646'));
    expectOneLine(await main(dir), /the connector is not built/);
  });

  test('a build whose dependencies are not installed: says to run npm ci', async () => {
    const dir = project({'lib/src/index.js': "require('faros-airbyte-cdk-not-installed');\n"});
    expectOneLine(
      await main(dir),
      /a module the connector needs is missing \(faros-airbyte-cdk-not-installed\): run `npm ci`, then `npm run build`/
    );
  });

  test('a build that throws while loading: names the error in one line', async () => {
    const dir = project({'lib/src/index.js': "throw new Error('half written\\nsecond line');\n"});
    expectOneLine(await main(dir), /the build in lib\/ cannot be loaded \(half written\); run `npm run build`/);
  });

  test('a failure no command handled: the line the command makes of it (failureLine), the debug level passed on', async () => {
    const dir = project({
      'lib/src/index.js': `exports.mainCommand = () => ({
  parseAsync: async () => { throw new TypeError('boom'); },
  failureLine: (err, debug) => 'said of ' + err.message + (debug ? ' at debug level' : ''),
});\n`,
    });
    expectOneLine(await main(dir), /^bin\/main: said of boom\n$/);
    const debug = await run(path.join(dir, 'bin', 'main'), ['spec'], dir, {LOG_LEVEL: 'debug'});
    expect(debug.stderr).toBe('bin/main: said of boom at debug level\n');
  });
});

describe("bin/main's line for a failure no command caught (the real command's failureLine)", () => {
  const quests = {seed: 5, quests: [{id: 'fa110000-0000-4000-8000-000000000001', rows: 2}]};
  const sink = () => new Writable({write: (_chunk, _encoding, callback) => callback()});
  const host: Host = {
    setExitCode: () => undefined,
    exit: () => undefined,
    stderr: () => undefined,
    onStop: () => () => undefined,
    worker: false,
  };

  test('once a command has read the config: the message, every secret in it masked, the stack too at debug level', async () => {
    await withWorld(quests, async (world) => {
      const secret = world.sim.clientSecret;
      const command = mainCommand({runtime: world.runtime, out: sink(), host});
      await command.parseAsync(['check', '--config', world.config()], {from: 'user'});
      const err = new Error(`request to https://x/?client_secret=${encodeURIComponent(secret)} failed\nsecond line`);
      const line = command.failureLine(err, false);
      expect(line).toBe('request to https://x/?client_secret=********** failed');
      const debug = command.failureLine(err, true);
      expect(debug).toMatch(/^Error: request to https:\/\/x\/\?client_secret=\*+ failed\nsecond line\n\s+at /);
      expect(`${line}${debug}`).not.toContain(secret);
      expect(`${line}${debug}`).not.toContain(encodeURIComponent(secret));
    });
  });

  test('before any config is read (no secret known to mask): a fixed text and the error class only; at debug level its frames, never its message', async () => {
    const command = mainCommand({out: sink(), host});
    await command.parseAsync(['spec'], {from: 'user'});
    const err = new SyntaxError(
      'Unexpected token } in JSON at position 52: {"client_secret": "not-yet-known-secret-1"}'
    );
    expect(command.failureLine(err, false)).toBe(
      'the connector failed unexpectedly (SyntaxError) before its config was read; the message is not shown, as it may hold a secret. Run with LOG_LEVEL=debug to see where it failed.'
    );
    const debug = command.failureLine(err, true).split('\n');
    expect(debug[0]).toBe(
      'the connector failed unexpectedly (SyntaxError) before its config was read; the message is not shown, as it may hold a secret.'
    );
    expect(debug.length).toBeGreaterThan(1);
    expect(debug.slice(1).every((frame) => /^\s+at /.test(frame))).toBe(true);
    expect(debug.join('\n')).not.toContain('not-yet-known-secret-1');
    expect(command.failureLine('a thrown string not-yet-known-secret-1', false)).toMatch(
      /^the connector failed unexpectedly \(string\)/
    );
  });
});

describe('npm run build (scripts/build-lib.js)', () => {
  /**
   * A project whose TypeScript compiler is a stand-in: it says it started, waits for a file named
   * `go` (or `fail`), then writes a build that says "new build" (or exits 2 without one).
   */
  function projectWithCompiler(files: Record<string, string> = {}): string {
    return project({
      ...files,
      'node_modules/typescript-native/package.json': '{}',
      'node_modules/typescript-native/bin/tsc': `
const fs = require('fs');
const path = require('path');
const out = process.argv[process.argv.indexOf('--outDir') + 1];
fs.writeFileSync('started', '');
const wait = setInterval(() => {
  if (fs.existsSync('fail')) process.exit(2);
  if (!fs.existsSync('go')) return;
  clearInterval(wait);
  fs.mkdirSync(path.join(out, 'src'), {recursive: true});
  fs.writeFileSync(path.join(out, 'src', 'index.js'), ${JSON.stringify(stubBuild('new build'))});
}, 20);
`,
    });
  }

  const build = (dir: string, args: string[] = []): Promise<Ran> =>
    run(path.join(ROOT, 'scripts', 'build-lib.js'), args, dir);

  async function started(dir: string): Promise<void> {
    while (!fs.existsSync(path.join(dir, 'started'))) await new Promise((r) => setTimeout(r, 20));
  }

  test('a rebuild: bin/main runs the previous build until the new one is whole, then the new one', async () => {
    const dir = projectWithCompiler({'lib/src/index.js': stubBuild('old build')});
    const building = build(dir);
    await started(dir);
    expect(await main(dir)).toEqual({code: 0, stdout: 'old build\n', stderr: ''});
    fs.writeFileSync(path.join(dir, 'go'), '');
    expect((await building).code).toBe(0);
    expect(await main(dir)).toEqual({code: 0, stdout: 'new build\n', stderr: ''});
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('lib'))).toEqual(['lib']);
  });

  test('a first build: bin/main says one is under way, then runs it', async () => {
    const dir = projectWithCompiler();
    const building = build(dir);
    await started(dir);
    expectOneLine(await main(dir), /being built right now/);
    fs.writeFileSync(path.join(dir, 'go'), '');
    expect((await building).code).toBe(0);
    expect((await main(dir)).stdout).toBe('new build\n');
  });

  test('a failed build keeps the previous lib/ and says so', async () => {
    const dir = projectWithCompiler({'lib/src/index.js': stubBuild('old build')});
    const building = build(dir);
    await started(dir);
    fs.writeFileSync(path.join(dir, 'fail'), '');
    const ran = await building;
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/The build failed \(tsc exited with 2\)\. lib\/ keeps the previous build\./);
    expect((await main(dir)).stdout).toBe('old build\n');
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('lib'))).toEqual(['lib']);
  });

  test('--tests (npm test): one compiler run over the tests too, and lib/ without the compiled tests', async () => {
    const dir = project({
      'node_modules/typescript-native/package.json': '{}',
      'node_modules/typescript-native/bin/tsc': `
const fs = require('fs');
const path = require('path');
const at = process.argv.indexOf('--outDir');
fs.appendFileSync('runs', JSON.stringify(process.argv.slice(2, at)) + '\\n');
const out = process.argv[at + 1];
for (const dir of ['src', 'test']) fs.mkdirSync(path.join(out, dir), {recursive: true});
fs.writeFileSync(path.join(out, 'src', 'index.js'), ${JSON.stringify(stubBuild('tested build'))});
fs.writeFileSync(path.join(out, 'test', 'a.test.js'), '');
`,
    });
    expect((await build(dir, ['--tests'])).code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'runs'), 'utf8')).toBe('["-p","tsconfig.test.json","--noEmit","false"]\n');
    expect(fs.readdirSync(path.join(dir, 'lib'))).toEqual(['src']);
    expect((await main(dir)).stdout).toBe('tested build\n');
  });

  test('before npm ci (no compiler installed): one line saying to run npm ci first, non-zero, lib/ untouched', async () => {
    const dir = project({'lib/src/index.js': stubBuild('old build')});
    const ran = await build(dir);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe('');
    expect(ran.stderr).toMatch(/^build-lib: [^\n]*\n$/);
    expect(ran.stderr).toMatch(
      /the TypeScript compiler \(typescript-native\) is not installed: run `npm ci` in .* first/
    );
    expect(ran.stderr).not.toMatch(/\bat .*:\d+:\d+|Require stack|node:internal/);
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('lib'))).toEqual(['lib']);
    expect((await main(dir)).stdout).toBe('old build\n');
  });

  test('leftovers of a killed build are cleared, so bin/main does not wait for it', async () => {
    const dir = projectWithCompiler({'lib.build-2147483646/src/index.js': '', 'lib.old-2147483646-1/x': ''});
    fs.writeFileSync(path.join(dir, 'go'), '');
    expect((await build(dir)).code).toBe(0);
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('lib'))).toEqual(['lib']);
  });
});

describe('npm run demo (scripts/demo.ts, compiled): the simulator on another port', () => {
  const demo = (args: string[]): Promise<Ran> => run(path.join(ROOT, 'lib', 'scripts', 'demo.js'), args, ROOT);

  test('--port N is the port the demo starts its simulator on: one in use is named, with the flag to pick another', async () => {
    const taken = await startSimulator({port: 0});
    try {
      const port = new URL(taken.apiUrl).port;
      const ran = await demo(['--port', port]);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toMatch(new RegExp(`^Port ${port} is in use\\b.*npm run demo -- --port N`));
      expect(ran.stderr).not.toMatch(/\bat .*:\d+:\d+/);
    } finally {
      await taken.close();
    }
  });

  test("the README's first command: the demo syncs every stream twice, in the modes each stream offers, exit 0", async () => {
    const ran = await demo(['--port', '0']);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/== first sync \(exit code 0\)/);
    expect(ran.stdout).toMatch(/== second sync from the saved state \(exit code 0\)/);
    expect(ran.stdout).toMatch(/^ {3}invitations: \d+ fields, full refresh only$/m);
    expect(ran.stdout).not.toMatch(/ERROR/);
  });

  test.each(['--port eighty', '--port=-1', '--prot 9000'])(
    'a mistaken command line (%s) gets the usage on stderr and exit 1, before anything starts',
    async (line) => {
      const ran = await demo(line.split(' '));
      expect(ran.code).toBe(1);
      expect(ran.stdout).toBe('');
      expect(ran.stderr).toMatch(
        /\nusage: npm run demo \[-- --port N\] \(the simulator's port: default 8717, 0 = a free one\)\n$/
      );
    }
  );
});
