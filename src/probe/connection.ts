import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {TokenProvider} from '../api/auth';
import {exportSettings, QuestbackApi} from '../api/client';
import {createHttpClient, retryPolicy} from '../api/http';
import {RateLimitGate} from '../api/rate-limit';
import {QuestbackConfig} from '../core/config';
import {LIMITS} from '../core/limits';
import {Runtime} from '../core/runtime';
import {AnswerLog} from './observer';

/** What the probe takes from outside. */
export interface ProbeEnvironment {
  runtime: Runtime;
  logger: AirbyteLogger;
  /** Every secret the probe sees (the client secret, each token) goes here, to be redacted from all output. */
  onSecret(secret: string, clientId?: string): void;
  signal?: AbortSignal;
}

/**
 * The connector's own API client and token provider, with the retry policy of a check (a person
 * waits), and every answer of both services recorded in `log`.
 */
export function probeConnection(
  config: QuestbackConfig,
  env: ProbeEnvironment,
  log: AnswerLog
): {api: QuestbackApi; authenticate(signal?: AbortSignal): Promise<void>} {
  env.onSecret(config.client_secret, config.client_id);
  const timeoutMs = Math.min(config.request_timeout_seconds * 1000, LIMITS.probe.answerTimeoutMs);
  const common = {runtime: env.runtime, logger: env.logger, policy: retryPolicy('check', timeoutMs)};
  const tokens = new TokenProvider(
    {
      authUrl: config.auth_url,
      apiUrl: config.api_url,
      clientId: config.client_id,
      clientSecret: config.client_secret,
      projectId: config.project_id,
    },
    createHttpClient({...common, baseURL: config.auth_url, onAnswer: log.token}),
    env.runtime,
    env.logger,
    (token) => env.onSecret(token)
  );
  const http = createHttpClient({
    ...common,
    baseURL: config.api_url,
    gate: new RateLimitGate(),
    tokens,
    onAnswer: log.api,
  });
  return {
    api: new QuestbackApi(http, config.api_url, exportSettings(config), timeoutMs),
    authenticate: async (signal) => void (await tokens.token(signal)),
  };
}
