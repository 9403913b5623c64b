import VError from 'verror';

/** How Airbyte should treat a failure: the user must fix something, it may pass on retry, or it is a bug. */
export type FailureType = 'config_error' | 'transient_error' | 'system_error';

interface ErrorContext {
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

/**
 * The credentials or the token service failed: every stream of the sync fails alike, so the reader
 * reports it once for the whole sync instead of once per stream.
 */
export class AuthFailure extends VError.WError {
  constructor(failureType: FailureType, message: string, context: ErrorContext = {}, cause?: Error) {
    super({name: 'AuthFailure', cause, info: {...context, failureType}}, '%s', message);
  }
}

/** The work was stopped on purpose (a stream failed, the consumer went away, the process was told to stop). */
export class Cancelled extends Error {
  constructor(reason = 'cancelled') {
    super(reason);
    this.name = 'Cancelled';
  }
}

export function isAuthFailure(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = VError.cause(e)) {
    if (e instanceof AuthFailure) return true;
  }
  return false;
}

/** The failure type of an error: the one nearest the top of the cause chain wins. */
export function failureTypeOf(err: unknown): FailureType {
  if (err instanceof Error) {
    const type = VError.info(err).failureType;
    if (type === 'config_error' || type === 'transient_error' || type === 'system_error') return type;
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

/**
 * A file system error in words, for a message that names the path beside it ("file not found", not
 * ENOENT); `what` is what the path names. A code without words here is said as the system says it.
 */
export function fileProblem(err: unknown, what: 'file' | 'folder' = 'file'): string {
  switch ((err as NodeJS.ErrnoException)?.code) {
    case 'ENOENT':
      return `${what} not found`;
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a folder, not a file';
    case 'ENOTDIR':
      return 'a part of the path is a file, not a folder';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'no space left on the device';
    default:
      return errorMessage(err);
  }
}
