import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {Connection, openConnection} from '../../api/connection';
import {retryPolicy, ThrottleListener} from '../../api/http';
import {QuestbackConfig} from '../../core/config';
import {LIMITS} from '../../core/limits';
import {Runtime} from '../../core/runtime';

/** What the connector takes from outside: the clock and sleep, and where secrets are reported for redaction. */
export interface Environment {
  runtime: Runtime;
  /** Every secret the connector sees or is given (the client secret, each token) goes here, to be redacted. */
  onSecret(secret: string, clientId?: string): void;
}

/** Builds the API client of a sync (patient) or of a check (fails fast, within a deadline). */
export function connect(
  config: QuestbackConfig,
  env: Environment,
  logger: AirbyteLogger,
  mode: 'sync' | 'check',
  onThrottle?: ThrottleListener
): Connection {
  const timeoutMs = config.request_timeout_seconds * 1000;
  const requestTimeoutMs = mode === 'check' ? Math.min(timeoutMs, LIMITS.check.deadlineMs / 3) : timeoutMs;
  return openConnection(config, {
    runtime: env.runtime,
    logger,
    onSecret: (secret, clientId) => env.onSecret(secret, clientId),
    policy: retryPolicy(mode, requestTimeoutMs),
    idleTimeoutMs: timeoutMs,
    onThrottle,
  });
}
