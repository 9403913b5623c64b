// jest's node environment, and a check when a test file ends: whatever the file opened that keeps a
// process alive (a server, a socket, a child process, a timer not unref'd) must be closed. A worker
// left holding one is force-exited by jest at the end of the run ("A worker process has failed to
// exit gracefully"), which names no file; this names the file and what it left open. That message
// came without any leak too: workers that held nothing took 110 to 250 ms from jest's end message to
// their exit at load 13, jest allows 500 ms, and it force-exited one in a run at load 20-25 where no
// file leaked. So package.json gives workers 10 s (workerGracefulExitTimeout), as this check gives
// handles.
'use strict';

const {setTimeout: sleep} = require('timers/promises');
const {TestEnvironment} = require('jest-environment-node');

/**
 * How long the handles of a file that just ended may take to close (a server closing, a child
 * process being reaped): polled, so a quiet machine waits a turn or two. Generous for a busy machine;
 * a handle that is really left open stays open however long this is.
 */
const SETTLE_MS = 10_000;
const POLL_MS = 20;

/** Types of resources open now, with their counts. */
function openResources() {
  const counts = new Map();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/** What is open beyond `baseline`, as "Type ×n". */
function beyond(baseline) {
  const extra = [];
  for (const [type, n] of openResources()) {
    const more = n - (baseline.get(type) ?? 0);
    if (more > 0) extra.push(`${type} ×${more}`);
  }
  return extra;
}

/** A line on each handle that keeps the process alive: its kind and what tells it apart. */
function describeHandles() {
  return process
    ._getActiveHandles()
    .filter((h) => typeof h.hasRef !== 'function' || h.hasRef())
    .map((h) => {
      const kind = h.constructor?.name ?? typeof h;
      if (kind === 'Server') return `Server ${JSON.stringify(h.address())}`;
      if (kind === 'Socket' && h.remotePort) return `Socket ${h.localPort} -> ${h.remotePort}`;
      if (kind === 'ChildProcess') return `ChildProcess ${h.pid} ${(h.spawnargs ?? []).join(' ').slice(0, 200)}`;
      if (kind === 'Timeout') return `Timeout of ${h._idleTimeout} ms: ${String(h._onTimeout).slice(0, 200)}`;
      return kind;
    })
    .filter((line) => !/^(Socket|Pipe|WriteStream|ReadStream)$/.test(line));
}

class LeakCheckingEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.baseline = openResources();
  }

  async teardown() {
    let extra = beyond(this.baseline);
    for (let waited = 0; extra.length && waited < SETTLE_MS; waited += POLL_MS) {
      await sleep(POLL_MS);
      extra = beyond(this.baseline);
    }
    await super.teardown();
    if (extra.length) {
      throw new Error(
        `The test file left open what keeps a process alive (${extra.join(', ')}), ${SETTLE_MS / 1000} s after its last test:\n  ${describeHandles().join('\n  ')}\nClose it in the test (a server's close() after closeAllConnections(), a child process awaited, a timer cleared or unref'd).`
      );
    }
  }
}

module.exports = LeakCheckingEnvironment;
