import {spawn} from 'child_process';

import {configuredCatalog, simConfig} from '../helpers/fixtures';
import {MAIN, runConnector, tempDir, writeJson} from '../helpers/connector';
import {Simulator, startSimulator} from '../../simulator';

describe('a read whose stdout is closed early (bin/main read … | head -5)', () => {
  let sim: Simulator;

  beforeAll(async () => {
    // About 3 MB of records: far more than a pipe holds once its reader is gone.
    sim = await startSimulator({
      seed: 11,
      exportDurationMs: 50,
      quests: [{id: 'c105ed00-0000-4000-8000-000000000001', rows: 2000}],
    });
  });
  afterAll(() => sim.close());

  test('stops quietly: exit 141 as for SIGPIPE, nothing on stderr', async () => {
    const dir = tempDir();
    const config = writeJson(dir, 'config.json', simConfig(sim));
    const discover = await runConnector(['discover', '--config', config]);
    const catalog = writeJson(dir, 'catalog.json', configuredCatalog(discover.messages, 'full_refresh'));

    const child = spawn(process.execPath, [MAIN, 'read', '--config', config, '--catalog', catalog], {
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
  });
});
