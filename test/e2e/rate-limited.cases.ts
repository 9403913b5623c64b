// A long wait for the service's rate limit is visible while it lasts: a log line and a RATE_LIMITED
// stream status with the reset time. In-process on a virtual clock, so the 30 s wait takes no time.

import {catalogOf, runHostile, withServer} from '../helpers/hostile';
import {streamOf} from '../helpers/fixtures';

const Q = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';

test('a long wait for the rate limit is logged and reported as a RATE_LIMITED stream status with its reset time', async () => {
  await withServer({quests: [Q]}, async (server) => {
    server.on('create', (ctx) =>
      ctx.n === 1 ? ctx.problem(429, 'Too many exports', {'Retry-After': '30'}) : ctx.next()
    );
    const started = server.clock.now();
    const run = await runHostile(server, 'read', {catalog: catalogOf(server, [Q])});
    expect(run.code).toBe(0);
    const messages = run.messages as {
      type: string;
      log?: {message: string};
      trace?: {stream_status?: {reasons?: {type: string; rate_limited: {quota_reset: number}}[]}};
    }[];
    const limited = messages.filter((m) => m.trace?.stream_status?.reasons?.[0]?.type === 'RATE_LIMITED');
    expect(limited).toHaveLength(1);
    expect(limited[0].trace?.stream_status).toMatchObject({stream_descriptor: {name: streamOf(Q)}, status: 'RUNNING'});
    const reset = limited[0].trace?.stream_status?.reasons?.[0].rate_limited.quota_reset ?? 0;
    expect(reset - started).toBeGreaterThanOrEqual(30_000);
    expect(reset - started).toBeLessThan(32_000);
    const logged = messages.filter(
      (m) => m.log && /was throttled \(429\): waiting 3\d\.\d s \(as Retry-After says/.test(m.log.message)
    );
    expect(logged).toHaveLength(1);
    expect(messages.filter((m) => m.type === 'RECORD').length).toBeGreaterThan(0);
  });
});
