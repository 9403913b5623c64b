// `npm run build`: compiles the TypeScript into lib/ without ever leaving the project without a working
// lib/. tsc writes into a fresh folder beside it, lib.build-<pid>; only when that compiled cleanly does
// it take lib's place, in two renames (lib -> lib.old-<pid>, lib.build-<pid> -> lib). So a bin/main
// started during a build runs the previous build; on a first build, or in the instant between the two
// renames, it finds no lib/ but a build folder of a live process, and says a build is under way. A
// failed compile leaves lib/ as it was. Run from the project root (npm does); plain JavaScript, since
// it runs before anything is compiled.
// `--tests` (npm test) compiles the tests in the same tsc run, so that they are type-checked without a
// second compiler run over src/ (half of the suite's time on 2 cores went to the two runs); lib/ gets
// no compiled test.
// The compiler is TypeScript 7 (the native one; the devDependency typescript-native): it writes the same
// JavaScript as TypeScript 5.9 and type-checks src/ and the tests in about 2 s of CPU instead of 20 (a
// tenth of npm test's time on 2 cores). TypeScript 5.9 stays for ESLint, which needs its JavaScript API.
'use strict';

const {spawnSync} = require('child_process');
const fs = require('fs');
const path = require('path');

const root = process.cwd();
const lib = path.join(root, 'lib');
/** Folders of builds under way (lib.build-<pid>) and of replaced builds not yet removed (lib.old-<pid>-<n>). */
const WORK_DIR = /^lib\.(build|old)-(\d+)(-\d+)?$/;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Folders left by builds that were killed: they would make bin/main say a build is under way. */
function removeLeftovers() {
  for (const name of fs.readdirSync(root)) {
    const m = WORK_DIR.exec(name);
    if (m && (m[1] === 'old' || !alive(Number(m[2])))) fs.rmSync(path.join(root, name), {recursive: true, force: true});
  }
}

/** Puts `next` in lib's place. Another build may swap at the same moment: then try again, a few times. */
function swapIn(next) {
  const olds = [];
  for (let attempt = 1; ; attempt++) {
    try {
      if (fs.existsSync(lib)) {
        const old = path.join(root, `lib.old-${process.pid}-${attempt}`);
        fs.renameSync(lib, old);
        olds.push(old);
      }
      fs.renameSync(next, lib);
      break;
    } catch (err) {
      const racing = ['ENOENT', 'ENOTEMPTY', 'EEXIST'].includes(err.code);
      if (!racing || attempt >= 5) throw err;
    }
  }
  for (const old of olds) fs.rmSync(old, {recursive: true, force: true});
}

/** The compiler (the package exports no bin/tsc: found beside its package.json), or one line saying to install it. */
function compiler() {
  try {
    return path.join(path.dirname(require.resolve('typescript-native/package.json', {paths: [root]})), 'bin', 'tsc');
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err;
    process.stderr.write(
      `build-lib: the TypeScript compiler (typescript-native) is not installed: run \`npm ci\` in ${root} first, then \`npm run build\`.\n`
    );
    process.exit(1);
  }
}

function main() {
  const withTests = process.argv.includes('--tests');
  const tsc = compiler();
  removeLeftovers();
  const next = path.join(root, `lib.build-${process.pid}`);
  fs.rmSync(next, {recursive: true, force: true});
  fs.mkdirSync(next);
  const project = withTests ? ['-p', 'tsconfig.test.json', '--noEmit', 'false'] : ['-p', 'tsconfig.json'];
  const result = spawnSync(process.execPath, [tsc, ...project, '--outDir', next], {stdio: 'inherit'});
  if (result.status !== 0) {
    fs.rmSync(next, {recursive: true, force: true});
    const why = result.error ? result.error.message : `tsc exited with ${result.status ?? result.signal}`;
    const kept = fs.existsSync(lib) ? ' lib/ keeps the previous build.' : '';
    process.stderr.write(`The build failed (${why}).${kept}\n`);
    process.exit(result.status || 1);
  }
  if (withTests) fs.rmSync(path.join(next, 'test'), {recursive: true, force: true});
  swapIn(next);
}

main();
