import {
  AirbyteConnectionStatus,
  AirbyteConnectionStatusMessage,
  AirbyteMessage,
  AirbyteMessageType,
} from 'faros-airbyte-cdk/lib/protocol';

import {FailureType} from '../core/errors';
import {CheckResult} from '../sync/commands/check';
import {StreamRef, StreamStatus} from '../sync/output-port';

/**
 * The Airbyte protocol messages the kit (0.11) has no types for, or builds in a Faros-specific way:
 * per-stream STATE with sourceStats, STREAM_STATUS traces, error traces with a stream.
 */
type StreamDescriptor = StreamRef;

interface StreamStateMessage extends AirbyteMessage {
  type: AirbyteMessageType.STATE;
  state: {
    type: 'STREAM';
    stream: {stream_descriptor: StreamDescriptor; stream_state: object};
    sourceStats: {recordCount: number};
  };
}

interface TraceMessage extends AirbyteMessage {
  type: AirbyteMessageType.TRACE;
  trace: {type: 'ERROR' | 'STREAM_STATUS'; emitted_at: number} & Record<string, unknown>;
}

/**
 * A message as one JSON line. The protocol wants sourceStats.recordCount written as a double
 * ("should always have a decimal point"), which JSON.stringify never does for whole numbers.
 */
export function toJsonLine(message: AirbyteMessage): string {
  const line = JSON.stringify(message);
  return message.type === AirbyteMessageType.STATE ? line.replace(/("recordCount":-?\d+)([,}])/, '$1.0$2') : line;
}

export function recordMessage(stream: StreamDescriptor, data: object, emittedAt: number): AirbyteMessage {
  return {
    type: AirbyteMessageType.RECORD,
    record: {
      ...(stream.namespace ? {namespace: stream.namespace} : {}),
      stream: stream.name,
      emitted_at: emittedAt,
      data,
    },
  } as AirbyteMessage;
}

export function streamState(stream: StreamDescriptor, state: object, recordCount: number): StreamStateMessage {
  return {
    type: AirbyteMessageType.STATE,
    state: {type: 'STREAM', stream: {stream_descriptor: stream, stream_state: state}, sourceStats: {recordCount}},
  };
}

export function streamStatus(
  stream: StreamDescriptor,
  status: StreamStatus,
  now: number,
  reasons?: Record<string, unknown>[]
): TraceMessage {
  return {
    type: AirbyteMessageType.TRACE,
    trace: {
      type: 'STREAM_STATUS',
      emitted_at: now,
      stream_status: {stream_descriptor: stream, status, ...(reasons?.length ? {reasons} : {})},
    },
  };
}

export function rateLimitedReason(quotaResetMs: number): Record<string, unknown> {
  return {type: 'RATE_LIMITED', rate_limited: {quota_reset: quotaResetMs}};
}

export function errorTrace(
  message: string,
  failureType: FailureType,
  now: number,
  opts: {internalMessage?: string; stackTrace?: string; stream?: StreamDescriptor} = {}
): TraceMessage {
  return {
    type: AirbyteMessageType.TRACE,
    trace: {
      type: 'ERROR',
      emitted_at: now,
      error: {
        message,
        failure_type: failureType,
        ...(opts.internalMessage ? {internal_message: opts.internalMessage} : {}),
        ...(opts.stackTrace ? {stack_trace: opts.stackTrace} : {}),
        ...(opts.stream ? {stream_descriptor: opts.stream} : {}),
      },
    },
  };
}

/** The check command's answer. */
export function connectionStatus(result: CheckResult): AirbyteConnectionStatusMessage {
  return new AirbyteConnectionStatusMessage(
    result.ok
      ? {status: AirbyteConnectionStatus.SUCCEEDED}
      : {status: AirbyteConnectionStatus.FAILED, message: result.message}
  );
}
