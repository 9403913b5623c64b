import {AxiosResponse} from 'axios';
import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {QuestbackConfig} from '../core/config';
import {Runtime} from '../core/runtime';
import {TokenProvider} from './auth';
import {exportSettings, QuestbackApi} from './client';
import {createHttpClient, RetryPolicy, ThrottleListener} from './http';
import {RateLimitGate} from './rate-limit';

/** The HTTP side of one command: the API client, authenticated by one shared token provider. */
export interface Connection {
  api: QuestbackApi;
  /** Gets a token: proves auth_url and the credentials without a request to the API. */
  authenticate(signal?: AbortSignal): Promise<void>;
}

/** How a command talks to the service: its clock, its patience, and who hears of secrets, throttles and answers. */
interface ConnectionOptions {
  runtime: Runtime;
  logger: AirbyteLogger;
  /** Every secret seen (the client secret, each token) goes here, to be redacted from all output. */
  onSecret(secret: string, clientId?: string): void;
  /** Retries and waits of every request, to both services. */
  policy: RetryPolicy;
  /** The longest wait for the next bytes of a download. */
  idleTimeoutMs: number;
  onThrottle?: ThrottleListener;
  /** Every answer of the token service, and of the API, as it comes (the probe records them). */
  onTokenAnswer?(response: AxiosResponse): void;
  onApiAnswer?(response: AxiosResponse): void;
}

/**
 * The API client and its token provider for a config. Requests to the token service and to the API
 * share the retry policy; only API answers feed the rate-limit gate.
 */
export function openConnection(config: QuestbackConfig, options: ConnectionOptions): Connection {
  const {runtime, logger, policy, onThrottle} = options;
  options.onSecret(config.client_secret, config.client_id);
  if (config.hash_salt) options.onSecret(config.hash_salt);
  const common = {runtime, logger, policy, onThrottle};
  const tokens = new TokenProvider(
    {
      authUrl: config.auth_url,
      apiUrl: config.api_url,
      clientId: config.client_id,
      clientSecret: config.client_secret,
      projectId: config.project_id,
    },
    createHttpClient({...common, baseURL: config.auth_url, onAnswer: options.onTokenAnswer}),
    runtime,
    logger,
    (token) => options.onSecret(token)
  );
  const http = createHttpClient({
    ...common,
    baseURL: config.api_url,
    gate: new RateLimitGate(),
    tokens,
    onAnswer: options.onApiAnswer,
  });
  return {
    api: new QuestbackApi(http, config.api_url, exportSettings(config), options.idleTimeoutMs, runtime),
    authenticate: async (signal) => void (await tokens.token(signal)),
  };
}
