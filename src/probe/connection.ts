import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {Connection, openConnection} from '../api/connection';
import {retryPolicy} from '../api/http';
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
export function probeConnection(config: QuestbackConfig, env: ProbeEnvironment, log: AnswerLog): Connection {
  const timeoutMs = Math.min(config.request_timeout_seconds * 1000, LIMITS.probe.answerTimeoutMs);
  return openConnection(config, {
    runtime: env.runtime,
    logger: env.logger,
    onSecret: (secret, clientId) => env.onSecret(secret, clientId),
    policy: retryPolicy('check', timeoutMs),
    idleTimeoutMs: timeoutMs,
    onTokenAnswer: log.token,
    onApiAnswer: log.api,
  });
}
