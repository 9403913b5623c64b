import {AxiosInstance} from 'axios';
import {AirbyteCatalogMessage, AirbyteSourceBase, AirbyteSpec, AirbyteConfiguredCatalog} from 'faros-airbyte-cdk';
import fs from 'fs';
import path from 'path';
import {StringDecoder} from 'string_decoder';
import VError from 'verror';

import {apiError, RequestContext} from './api-error';
import {TokenProvider} from './auth';
import {QuestbackConfig, SEPARATORS} from './config';
import {CsvRowParser} from './csv-parser';
import {columnsFromHeader} from './csv-records';
import {errorMessage, failureTypeOf} from './errors';
import {DEFAULT_POLL_POLICY, ExportJobs, exportSettings, PollPolicy} from './export-job';
import {ExportScheduler} from './export-scheduler';
import {ApiRequestConfig, createHttpClient, DEFAULT_RETRY_POLICY, RetryPolicy} from './http-client';
import {ConnectorLogger, SecretScrubber} from './logger';
import {MessageWriter} from './output';
import {QuestStream} from './quest-stream';
import {RateLimitGate} from './rate-limit';
import {readStreams} from './read';
import {Runtime, systemRuntime} from './runtime';
import {CONNECTOR_FIELDS} from './schema';

const DAY_MS = 86_400_000;

/** What the source takes from outside; tests replace the clock, the sleep and the policies. */
export interface SourceEnvironment {
  runtime: Runtime;
  scrubber: SecretScrubber;
  retryPolicy: RetryPolicy;
  pollPolicy: Omit<PollPolicy, 'timeoutMs'>;
}

export function defaultEnvironment(scrubber = new SecretScrubber()): SourceEnvironment {
  return {runtime: systemRuntime, scrubber, retryPolicy: DEFAULT_RETRY_POLICY, pollPolicy: DEFAULT_POLL_POLICY};
}

/** The HTTP side of one command: a token provider and the export API, sharing one rate-limit gate. */
export interface Connection {
  api: AxiosInstance;
  exports: ExportJobs;
  gate: RateLimitGate;
}

export type ThrottleListener = (ctx: RequestContext | undefined, waitMs: number, resetAt: number) => void;

export class QuestbackSource extends AirbyteSourceBase<QuestbackConfig> {
  constructor(
    protected override readonly logger: ConnectorLogger,
    private readonly env: SourceEnvironment
  ) {
    super(logger);
  }

  get type(): string {
    return 'questback';
  }

  override async spec(): Promise<AirbyteSpec> {
    const file = path.resolve(__dirname, '..', '..', 'resources', 'spec.json');
    return new AirbyteSpec(JSON.parse(fs.readFileSync(file, 'utf8')));
  }

  connect(config: QuestbackConfig, onThrottle?: ThrottleListener): Connection {
    const {runtime, scrubber, retryPolicy} = this.env;
    scrubber.add(config.client_secret);
    const gate = new RateLimitGate();
    const common = {runtime, logger: this.logger, policy: retryPolicy, onThrottle};
    const authHttp = createHttpClient({...common, baseURL: config.auth_url});
    const tokens = new TokenProvider(
      {
        authUrl: config.auth_url,
        apiUrl: config.api_url,
        clientId: config.client_id,
        clientSecret: config.client_secret,
        projectId: config.project_id,
      },
      authHttp,
      runtime,
      this.logger,
      (token) => scrubber.add(token)
    );
    const api = createHttpClient({...common, baseURL: config.api_url, gate, tokens});
    const poll = {...this.env.pollPolicy, timeoutMs: config.export_timeout_minutes * 60_000};
    const exports = new ExportJobs(api, config.api_url, exportSettings(config), runtime, this.logger, poll);
    return {api, exports, gate};
  }

  /** A token, then one cheap list request per quest: proves credentials and access to every quest. */
  async checkConnection(config: QuestbackConfig): Promise<[boolean, VError | undefined]> {
    const {api} = this.connect(config);
    const problems: string[] = [];
    for (const questId of config.quest_ids) {
      const context: RequestContext = {operation: 'Checking access', questId};
      try {
        await api.get(`/v1/quests/${encodeURIComponent(questId)}/invitations`, {
          params: {skip: 0, take: 0},
          context,
        } as ApiRequestConfig);
      } catch (err) {
        const error = apiError(err, context);
        // Credentials that do not work fail every quest the same way: say it once.
        const info = VError.info(error);
        if (info.operation === 'token' || info.status === 401) return [false, error];
        problems.push(error.message);
      }
    }
    if (problems.length) {
      return [
        false,
        new VError(
          '%s',
          `${problems.length} of ${config.quest_ids.length} quests cannot be read: ${problems.join(' ')}`
        ),
      ];
    }
    this.logger.info(`Connection check passed: credentials accepted and ${config.quest_ids.length} quest(s) readable`);
    return [true, undefined];
  }

  streams(config: QuestbackConfig): QuestStream[] {
    return config.quest_ids.map((id) => this.questStream(config, id, []));
  }

  questStream(
    config: QuestbackConfig,
    questId: string,
    columns: readonly string[],
    connection?: Connection,
    scheduler?: ExportScheduler
  ): QuestStream {
    return new QuestStream(
      this.logger,
      questId,
      columns,
      {
        startMs: Date.parse(config.start_date),
        windowMs: config.window_days * DAY_MS,
        separator: SEPARATORS[config.field_separator],
        maxDownloadAttempts: 5,
      },
      connection?.exports,
      scheduler
    );
  }

  /** One stream per quest, with the columns of a tiny recent export of each. */
  override async discover(config: QuestbackConfig): Promise<AirbyteCatalogMessage> {
    const connection = this.connect(config);
    const end = this.syncEnd(config);
    const columns = await mapLimited(config.quest_ids, config.max_concurrent_exports, (id) =>
      this.learnColumns(connection, config, id, end)
    );
    const streams = config.quest_ids.map((id, i) => this.questStream(config, id, columns[i]).asAirbyteStream());
    return new AirbyteCatalogMessage({streams});
  }

  /** The newest moment a sync may ask for: a little before now, so responses being written settle. */
  syncEnd(config: QuestbackConfig): number {
    return this.env.runtime.now() - config.settle_seconds * 1000;
  }

  private async learnColumns(
    connection: Connection,
    config: QuestbackConfig,
    questId: string,
    end: number
  ): Promise<string[]> {
    const window = {since: end - 1, until: end};
    try {
      const exportId = await connection.exports.create(questId, window);
      const ready = await connection.exports.waitUntilReady(questId, exportId, window);
      const download = await connection.exports.download(ready);
      const parser = new CsvRowParser(SEPARATORS[config.field_separator]);
      const decoder = new StringDecoder('utf8');
      const rows: string[][] = [];
      for await (const chunk of download.body as AsyncIterable<Buffer>) {
        parser.push(decoder.write(chunk), rows);
        if (rows.length) break;
      }
      download.body.destroy();
      if (!rows.length) {
        parser.end(rows);
      }
      if (!rows.length) {
        this.logger.warn(
          `Quest ${questId}: a sample export had no header row, so the schema lists only the connector's fields; the survey's columns still arrive in every record.`
        );
        return [];
      }
      const {names, renamed} = columnsFromHeader(rows[0], CONNECTOR_FIELDS);
      for (const r of renamed)
        this.logger.warn(
          `Quest ${questId}: column ${JSON.stringify(r.original)} appears more than once; the repeat is named ${JSON.stringify(r.renamed)}.`
        );
      this.logger.info(`Quest ${questId}: discovered ${names.length} columns`);
      return names;
    } catch (err) {
      if (failureTypeOf(err) === 'config_error') throw err;
      this.logger.warn(
        `Quest ${questId}: could not learn the columns (${errorMessage(err)}); the schema lists only the connector's fields.`
      );
      return [];
    }
  }

  /** Reads the configured streams; resolves to false when any stream failed. */
  async readAll(
    config: QuestbackConfig,
    catalog: AirbyteConfiguredCatalog,
    state: Map<string, unknown>,
    writer: MessageWriter
  ): Promise<boolean> {
    return readStreams(this, config, catalog, state, writer, this.logger, this.env.runtime);
  }
}

/** Runs fn over items with at most `limit` at once, keeping the order of results. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({length: Math.min(limit, items.length)}, worker));
  return results;
}
