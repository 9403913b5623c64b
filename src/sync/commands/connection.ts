import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {Connection, openConnection} from '../../api/connection';
import {retryPolicy, ThrottleListener} from '../../api/http';
import {QuestbackConfig} from '../../core/config';
import {LIMITS} from '../../core/limits';
import {Runtime} from '../../core/runtime';
import {StreamDefinition} from '../streams/stream-definition';

/** What the connector takes from outside: the clock and sleep, and where secrets are reported for redaction. */
export interface Environment {
  runtime: Runtime;
  /** Every secret the connector sees or is given (the client secret, each token) goes here, to be redacted. */
  onSecret(secret: string, clientId?: string): void;
  /** The kinds of stream the source has: catalog.ts's list, unless a test adds a kind of its own. */
  definitions?: readonly StreamDefinition[];
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
