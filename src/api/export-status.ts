import {cut, quote} from '../core/outside-text';

/**
 * The states of an export job as the connector acts on them. The service documents PENDING,
 * INPROGRESS, COMPLETED (answered as a 302 to the file) and ERROR, "or a similar failure status";
 * anything else is handled explicitly here rather than guessed at by the caller.
 */
export type ExportStatus =
  /** Still being generated: PENDING, INPROGRESS, or an unknown status that names neither failure nor success. */
  | {kind: 'running'; status: string; known: boolean}
  /** The file is ready at this address. */
  | {kind: 'completed'; downloadUrl: string}
  /** Generation failed on the service: ERROR, or a status naming a failure. */
  | {kind: 'failed'; status: string}
  /** The service no longer knows the export (404 or 410 on its status): it must be created again. */
  | {kind: 'vanished'; httpStatus: number};

const RUNNING = new Set(['PENDING', 'INPROGRESS']);
/**
 * Words of a status that ended badly. Tested before the success words, so that COMPLETED_WITH_ERRORS
 * or DONE_TIMED_OUT fail. An unknown word must not wait for export_timeout_minutes (three times,
 * with the splits) when it already says the job is over.
 */
const FAILURE_WORDS =
  /ERROR|FAIL|CANCEL|ABORT|REJECT|EXPIRE|TIME[D_]*OUT|DENIED|INVALID|KILLED|TERMINATED|STOPPED|DELETED|GONE/;
/** Words of a status that ended well: the file is ready, at the answer's Location or the documented path. */
const SUCCESS_WORDS = /^(COMPLETED?|SUCCESS(FUL)?|SUCCEEDED|DONE|FINISHED|READY|AVAILABLE|OK|GENERATED|EXPORTED)$/;

/** Classifies the status field of a status record that is not a redirect. */
export function classifyStatus(raw: unknown): Exclude<ExportStatus, {kind: 'completed' | 'vanished'}> | {kind: 'done'} {
  // Logged and put in messages: a word of the service's, cut as any outside text (String() of a
  // list nested deep would overflow the stack).
  const text = typeof raw === 'string' ? raw : raw === undefined || raw === null ? '' : quote(raw);
  const status = cut(text)
    .trim()
    .toUpperCase()
    .replace(/[\s-]+/g, '_');
  if (RUNNING.has(status)) return {kind: 'running', status, known: true};
  if (status === '' || FAILURE_WORDS.test(status)) return {kind: 'failed', status: status || '(none)'};
  if (SUCCESS_WORDS.test(status)) return {kind: 'done'};
  return {kind: 'running', status, known: false};
}
