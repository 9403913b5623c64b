import http from 'http';
import {AddressInfo} from 'net';

import {QuestbackApi} from '../../src/api/client';
import {createHttpClient, retryPolicy} from '../../src/api/http';
import {systemRuntime} from '../../src/core/runtime';
import {quietLogger, virtualRuntime} from '../helpers/fake-api';
import {DEFAULT_EXPORT_SETTINGS} from '../helpers/fixtures';

type Answer = {status: number; headers?: Record<string, string>; body?: string};

/** A loopback server answering each path from a table. */
async function server(answers: Record<string, Answer>): Promise<{url: string; close: () => Promise<void>}> {
  const s = http.createServer((req, res) => {
    const answer = answers[(req.url ?? '').split('?')[0]] ?? {status: 404, body: '{"detail":"no route"}'};
    res.writeHead(answer.status, {'content-type': 'application/json', ...(answer.headers ?? {})});
    res.end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return {url, close: () => new Promise<void>((resolve) => s.close(() => resolve()))};
}

function api(url: string): QuestbackApi {
  const http = createHttpClient({
    baseURL: url,
    runtime: virtualRuntime(),
    logger: quietLogger(),
    policy: retryPolicy('sync', 2000),
  });
  return new QuestbackApi(http, url, DEFAULT_EXPORT_SETTINGS, 2000, systemRuntime);
}

const FILE = '/v1/quests/q/exports/e/download';

describe('the export API client', () => {
  test.each([
    [410, 'gone'],
    [404, 'gone'],
  ])('a download answered %i means the export is gone', async (status, kind) => {
    const s = await server({[FILE]: {status, body: '{"detail":"deleted"}'}});
    await expect(api(s.url).openDownload('q', 'e', `${s.url}${FILE}`)).resolves.toMatchObject({kind});
    await s.close();
  });

  test('only a 200 is a file: 204, a 3xx without Location, a loop and an HTML page are errors saying so', async () => {
    const s = await server({
      '/empty': {status: 204},
      '/nowhere': {status: 302},
      '/loop': {status: 302, headers: {location: '/loop'}},
      '/page': {status: 200, headers: {'content-type': 'text/html'}, body: '<html><title>Sign in</title></html>'},
    });
    const client = api(s.url);
    await expect(client.openDownload('q', 'e', `${s.url}/empty`)).rejects.toThrow(
      /answered HTTP 204 instead of the file/
    );
    await expect(client.openDownload('q', 'e', `${s.url}/nowhere`)).rejects.toThrow(/HTTP 302 without a Location/);
    await expect(client.openDownload('q', 'e', `${s.url}/loop`)).rejects.toThrow(/redirected in a loop/);
    await expect(client.openDownload('q', 'e', `${s.url}/page`)).rejects.toThrow(/HTML page .* instead of CSV/);
    await s.close();
  });

  test('a redirect to plain http on another host is refused, with the query string of the link left out', async () => {
    const s = await server({
      [FILE]: {status: 302, headers: {location: 'http://cdn.example.com/f.csv?X-Amz-Signature=secret'}},
    });
    await expect(api(s.url).openDownload('q', 'e', `${s.url}${FILE}`)).rejects.toThrow(
      /redirected to http:\/\/cdn\.example\.com, but files are downloaded over https only/
    );
    await s.close();
  });

  test('a status 302 with a relative Location resolves against the status address; a 404 on status means the export vanished', async () => {
    const s = await server({
      '/v1/quests/q/exports/e/status': {status: 302, headers: {location: 'download'}},
      '/v1/quests/q/exports/gone/status': {status: 404, body: '{"detail":"no such export"}'},
    });
    const client = api(s.url);
    await expect(client.exportStatus('q', 'e')).resolves.toEqual({
      kind: 'completed',
      downloadUrl: `${s.url}/v1/quests/q/exports/e/download`,
    });
    await expect(client.exportStatus('q', 'gone')).resolves.toEqual({kind: 'vanished', httpStatus: 404});
    await s.close();
  });

  test('a status record names its state; an unknown status is still running, a failure-like one failed', async () => {
    const s = await server({
      '/v1/quests/q/exports/a/status': {status: 200, body: '{"status":"INPROGRESS"}'},
      '/v1/quests/q/exports/b/status': {status: 200, body: '{"status":"QUEUED"}'},
      '/v1/quests/q/exports/c/status': {status: 200, body: '{"status":"FAILED"}'},
      '/v1/quests/q/exports/d/status': {status: 200, body: '{"status":"COMPLETED"}'},
    });
    const client = api(s.url);
    await expect(client.exportStatus('q', 'a')).resolves.toEqual({kind: 'running', status: 'INPROGRESS', known: true});
    await expect(client.exportStatus('q', 'b')).resolves.toEqual({kind: 'running', status: 'QUEUED', known: false});
    await expect(client.exportStatus('q', 'c')).resolves.toEqual({kind: 'failed', status: 'FAILED'});
    await expect(client.exportStatus('q', 'd')).resolves.toEqual({
      kind: 'completed',
      downloadUrl: `${s.url}/v1/quests/q/exports/d/download`,
    });
    await s.close();
  });

  test("a 409 on create is a conflict with the service's explanation", async () => {
    const s = await server({
      '/v1/quests/q/exports': {status: 409, body: '{"detail":"An export for quest \'q\' is already being generated"}'},
    });
    await expect(api(s.url).createExport('q', {since: 0, until: 1000})).resolves.toEqual({
      kind: 'conflict',
      explanation: "An export for quest 'q' is already being generated",
    });
    await s.close();
  });
});
