import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {TokenProvider} from '../../api/auth';
import {exportSettings, QuestbackApi} from '../../api/client';
import {createHttpClient, retryPolicy, ThrottleListener} from '../../api/http';
import {RateLimitGate} from '../../api/rate-limit';
import {QuestbackConfig} from '../../core/config';
import {LIMITS} from '../../core/limits';
import {Runtime} from '../../core/runtime';

/** What the connector takes from outside: the clock and sleep, and where secrets are reported for redaction. */
export interface Environment {
  runtime: Runtime;
  /** Every secret the connector sees or is given (the client secret, each token) goes here, to be redacted. */
  onSecret(secret: string, clientId?: string): void;
}

/** The HTTP side of one command: the API client, authenticated by one shared token provider. */
export interface Connection {
  api: QuestbackApi;
  /** Gets a token: proves auth_url and the credentials without a request to the API. */
  authenticate(signal?: AbortSignal): Promise<void>;
}

/**
 * Builds the API client of a sync (patient) or of a check (fails fast, within a deadline). Requests
 * to the token service and to the API share the retry policy; only API answers feed the rate-limit gate.
 */
export function connect(
  config: QuestbackConfig,
  env: Environment,
  logger: AirbyteLogger,
  mode: 'sync' | 'check',
  onThrottle?: ThrottleListener
): Connection {
  env.onSecret(config.client_secret, config.client_id);
  const timeoutMs = config.request_timeout_seconds * 1000;
  const requestTimeoutMs = mode === 'check' ? Math.min(timeoutMs, LIMITS.check.deadlineMs / 3) : timeoutMs;
  const policy = retryPolicy(mode, requestTimeoutMs);
  const common = {runtime: env.runtime, logger, policy, onThrottle};
  const tokens = new TokenProvider(
    {
      authUrl: config.auth_url,
      apiUrl: config.api_url,
      clientId: config.client_id,
      clientSecret: config.client_secret,
      projectId: config.project_id,
    },
    createHttpClient({...common, baseURL: config.auth_url}),
    env.runtime,
    logger,
    (token) => env.onSecret(token)
  );
  const http = createHttpClient({...common, baseURL: config.api_url, gate: new RateLimitGate(), tokens});
  return {
    api: new QuestbackApi(http, config.api_url, exportSettings(config), timeoutMs),
    authenticate: async (signal) => void (await tokens.token(signal)),
  };
}
