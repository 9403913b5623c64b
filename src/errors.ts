import VError from 'verror';

/** How Airbyte should treat a failure: the user must fix something, it may pass on retry, or it is a bug. */
export type FailureType = 'config_error' | 'transient_error' | 'system_error';

export interface ErrorContext {
  questId?: string;
  operation?: string;
  status?: number;
  traceId?: string;
  requestId?: string;
  window?: string;
  [key: string]: unknown;
}

/** A VError that carries its failure type in the info object, so outer wraps keep it. */
export function connectorError(
  failureType: FailureType,
  message: string,
  context: ErrorContext = {},
  cause?: Error
): VError {
  // WError: the message already says what the cause means; VError would append the cause's text again.
  return new VError.WError({name: 'QuestbackError', cause, info: {...context, failureType}}, '%s', message);
}

/** The failure type of an error: the one nearest the top of the cause chain wins. */
export function failureTypeOf(err: unknown): FailureType {
  if (err instanceof Error) {
    const type = VError.info(err).failureType;
    if (type === 'config_error' || type === 'transient_error' || type === 'system_error') {
      return type;
    }
  }
  return 'system_error';
}

/** Context of the error chain (quest, status, traceId...), for logs and traces. */
export function errorContext(err: unknown): ErrorContext {
  return err instanceof Error ? (VError.info(err) as ErrorContext) : {};
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
