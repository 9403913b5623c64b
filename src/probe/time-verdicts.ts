import {plural} from '../core/quantities';
import {formatDuration} from '../core/time';
import {FileSample} from './file-sample';
import {tally} from './shapes';
import {confirmed, contradicted, counts, ExportRun, ProbeFacts, unknown, Verdict} from './verdict';

// The verdicts on time: the Created column's zone and precision, and the export's time filter (rows
// inside their window, since exclusive, until inclusive).

export function createdVerdicts(files: FileSample[]): Verdict[] {
  const shapes = new Map<string, number>();
  for (const f of files) for (const [shape, n] of f.createdShapes) shapes.set(shape, (shapes.get(shape) ?? 0) + n);
  const times = files.flatMap((f) => f.createdTimes);
  if (!shapes.size) {
    const why = 'no response with a Created value was read';
    return [unknown('created.zone', why), unknown('created.precision', why)];
  }
  const unread = [...shapes.values()].reduce((a, b) => a + b, 0) - times.length;
  const zoneOk = unread === 0 && times.every((t) => t.zone === 'utc');
  const digits = counts(times.map((t) => `${t.digits} fractional digits`));
  const precisionOk = times.length > 0 && times.every((t) => t.digits === 3);
  const zones = counts(times.map((t) => ({utc: 'UTC', offset: 'an offset from UTC', none: 'no zone'})[t.zone]));
  if (unread) zones.set('not a time', unread);
  return [
    (zoneOk ? confirmed : contradicted)('created.zone', `${tally(zones)}; written ${tally(shapes)}`),
    times.length
      ? (precisionOk ? confirmed : contradicted)('created.precision', tally(digits))
      : unknown('created.precision', `no Created value reads as a time: ${tally(shapes)}`),
  ];
}

export function filterVerdicts(facts: ProbeFacts, files: {run: ExportRun; file: FileSample}[]): Verdict[] {
  // The boundary export is judged by its own verdicts: its edge rows lie exactly at since and until.
  const samples = files.filter((f) => f.run.purpose !== 'boundary').map((f) => f.file);
  const fit = samples.reduce(
    (s, f) => ({
      inside: s.inside + f.fit.inside,
      before: s.before + f.fit.before,
      after: s.after + f.fit.after,
      maxBeforeMs: Math.max(s.maxBeforeMs, f.fit.maxBeforeMs),
      maxAfterMs: Math.max(s.maxAfterMs, f.fit.maxAfterMs),
    }),
    {inside: 0, before: 0, after: 0, maxBeforeMs: 0, maxAfterMs: 0}
  );
  const total = fit.inside + fit.before + fit.after;
  let window: Verdict;
  if (!total) window = unknown('filter.window', 'no Created value was read as a time');
  else if (fit.before + fit.after === 0) {
    window = confirmed(
      'filter.window',
      `all ${plural(total, 'row')} of ${plural(samples.length, 'export')} inside their windows`
    );
  } else {
    const parts = [
      fit.before ? `${fit.before} before its window (by up to ${formatDuration(fit.maxBeforeMs)})` : '',
      fit.after ? `${fit.after} after it (by up to ${formatDuration(fit.maxAfterMs)})` : '',
    ].filter(Boolean);
    window = contradicted(
      'filter.window',
      `${fit.before + fit.after} of ${plural(total, 'row')} outside: ${parts.join(', ')}`
    );
  }
  const b = facts.boundary;
  if (!b.tested) return [window, unknown('filter.since-exclusive', b.why), unknown('filter.until-inclusive', b.why)];
  return [
    window,
    b.sinceRow
      ? contradicted('filter.since-exclusive', 'the response created exactly at `since` was in the export')
      : confirmed('filter.since-exclusive', 'the response created exactly at `since` was not in the export'),
    b.untilRow
      ? confirmed('filter.until-inclusive', 'the response created exactly at `until` was in the export')
      : contradicted('filter.until-inclusive', 'the response created exactly at `until` was not in the export'),
  ];
}
