/**
 * The states of an export job as the connector acts on them. The service documents PENDING,
 * INPROGRESS, COMPLETED (answered as a 302 to the file) and ERROR, "or a similar failure status";
 * anything else is handled explicitly here rather than guessed at by the caller.
 */
export type ExportStatus =
  /** Still being generated: PENDING, INPROGRESS, or an unknown status that names no failure. */
  | {kind: 'running'; status: string; known: boolean}
  /** The file is ready at this address. */
  | {kind: 'completed'; downloadUrl: string}
  /** Generation failed on the service: ERROR, or a status naming a failure. */
  | {kind: 'failed'; status: string}
  /** The service no longer knows the export (404 or 410 on its status): it must be created again. */
  | {kind: 'vanished'; httpStatus: number};

const RUNNING = new Set(['PENDING', 'INPROGRESS']);
const FAILURE_WORDS = /ERROR|FAIL|CANCEL|ABORT|REJECT|EXPIRE/;

/** Classifies the status field of a status record that is not a redirect. */
export function classifyStatus(raw: unknown): Exclude<ExportStatus, {kind: 'completed' | 'vanished'}> | {kind: 'done'} {
  const status = String(raw ?? '')
    .trim()
    .toUpperCase();
  if (RUNNING.has(status)) return {kind: 'running', status, known: true};
  if (status === 'COMPLETED') return {kind: 'done'};
  if (status === '' || FAILURE_WORDS.test(status)) return {kind: 'failed', status: status || '(none)'};
  return {kind: 'running', status, known: false};
}
