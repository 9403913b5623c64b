import {completedVerdicts, createVerdicts, statusVerdicts} from './export-verdicts';
import {csvVerdicts, downloadVerdicts} from './file-verdicts';
import {invitationVerdicts} from './invitation-probe';
import {errorVerdicts, rateLimitVerdicts, tokenVerdicts} from './service-verdicts';
import {createdVerdicts, filterVerdicts} from './time-verdicts';
import {ProbeFacts, Verdict} from './verdict';

// The probe's judgement: every verdict, each from the judge of its concern (export, file, time, service).

/** Every verdict, in the order of the assumptions. */
export function judge(facts: ProbeFacts): Verdict[] {
  const files = facts.exports.flatMap((run) => (run.file ? [{run, file: run.file}] : []));
  return [
    ...tokenVerdicts(facts.log),
    ...createVerdicts(facts.log),
    ...statusVerdicts(facts.log),
    ...completedVerdicts(facts),
    ...downloadVerdicts(
      facts.log,
      files.map((f) => f.file)
    ),
    ...csvVerdicts(facts, files),
    ...createdVerdicts(files.map((f) => f.file)),
    ...filterVerdicts(facts, files),
    ...rateLimitVerdicts(facts.log.answers),
    ...errorVerdicts(facts.log.of('unknown-export')),
    ...invitationVerdicts(facts.invitations),
  ];
}
