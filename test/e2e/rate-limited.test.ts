// A long wait for the service's rate limit is visible while it lasts: a log line and a RATE_LIMITED
// stream status with the reset time. Run in-process on a virtual clock, so the 30 s wait takes no time.

import {PassThrough} from 'stream';

import {parseConfig} from '../../src/core/config';
import {QuestbackSource} from '../../src/index';
import {AirbyteOutput} from '../../src/protocol/airbyte-output';
import {ConnectorLogger} from '../../src/protocol/logger';
import {MessageWriter} from '../../src/protocol/output';
import {ConfiguredStream} from '../../src/sync/commands/read';
import {virtualRuntime} from '../helpers/fake-api';
import {catalogOf, hostileConfig, streamOf, withServer} from '../hostile/server';

const Q = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';

test('a long wait for the rate limit is logged and reported as a RATE_LIMITED stream status with its reset time', async () => {
  await withServer({quests: [Q]}, async (server) => {
    server.on('create', (ctx) =>
      ctx.n === 1 ? ctx.problem(429, 'Too many exports', {'Retry-After': '30'}) : ctx.next()
    );
    const rt = virtualRuntime(Date.now());
    const lines: string[] = [];
    const out = new PassThrough();
    out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    const writer = new MessageWriter(out);
    const source = new QuestbackSource(new ConnectorLogger(writer), {runtime: rt, onSecret: () => undefined});
    const {config} = parseConfig(hostileConfig(server, {request_timeout_seconds: 2, settle_seconds: 0}), Date.now());
    const catalog = catalogOf(server, [Q]) as {streams: ConfiguredStream[]};
    const started = rt.now();
    const ok = await source.runRead(
      config,
      catalog.streams,
      new Map(),
      new AirbyteOutput(writer, rt),
      new AbortController().signal
    );
    await writer.flush();
    expect(ok).toBe(true);
    const messages = lines.map((l) => JSON.parse(l));
    const limited = messages.filter((m) => m.trace?.stream_status?.reasons?.[0]?.type === 'RATE_LIMITED');
    expect(limited).toHaveLength(1);
    expect(limited[0].trace.stream_status).toMatchObject({stream_descriptor: {name: streamOf(Q)}, status: 'RUNNING'});
    const reset = limited[0].trace.stream_status.reasons[0].rate_limited.quota_reset;
    expect(reset - started).toBeGreaterThanOrEqual(30_000);
    expect(reset - started).toBeLessThan(32_000);
    const logged = messages.filter(
      (m) => m.log && /was throttled \(429\): waiting 3\d\.\d s \(as Retry-After says/.test(m.log.message)
    );
    expect(logged).toHaveLength(1);
    expect(messages.filter((m) => m.type === 'RECORD').length).toBeGreaterThan(0);
  });
});
