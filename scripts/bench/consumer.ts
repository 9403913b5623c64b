// The downstream end of a measured pipe: counts the bytes, lines and RECORD lines of stdin, notes
// when the first byte and the first RECORD arrived, counts the STATE lines and keeps each stream's
// last state, notes when each stream status arrived, keeps the few other non-RECORD lines for checks,
// and prints one JSON line (ConsumerReport, with its own CPU time) at the end. It works on Buffers, never decoding records,
// so that it takes as little CPU as possible from the producer on a small machine.
// BENCH_DATA_LINES=1: the producer is a tool that writes data lines only (a JSON object a row, no
// protocol message), so every line counts as a record and none is decoded: a tool's row then costs
// the consumer what a connector's RECORD line costs it (without it, each row went the way of a
// STATE line, copied and decoded, and throttled the tool).

import {ConsumerReport} from './types';

const PREFIX = Buffer.from('{"type":"RECORD"');
const DATA_LINES = process.env.BENCH_DATA_LINES === '1';
const MAX_OTHERS = 500;
const MAX_OTHER_CHARS = 2000;
/**
 * A non-RECORD line is kept whole up to this: a STATE of a combined stream maps every quest (150 KB
 * for 500 quests) and arrives in several chunks; a STATE cut short would not parse and be lost.
 */
const MAX_OTHER_LINE_BYTES = 64 * 2 ** 20;

const report: ConsumerReport = {
  bytes: 0,
  lines: 0,
  records: 0,
  recordBytes: 0,
  endAt: 0,
  states: 0,
  stateRecordCounts: [],
  lastStates: {},
  statuses: [],
  others: [],
  othersDropped: 0,
  cpuS: 0,
};

interface Message {
  type?: string;
  state?: {stream?: {stream_descriptor?: {name?: string}}; sourceStats?: {recordCount?: number}};
  trace?: {type?: string; stream_status?: {stream_descriptor?: {name?: string}; status?: string}};
}

/** STATE and STREAM_STATUS lines are taken apart; true when the line was one of them. */
function structured(text: string): boolean {
  if (!text.startsWith('{"type":"STATE"') && !text.includes('"STREAM_STATUS"')) return false;
  let m: Message;
  try {
    m = JSON.parse(text) as Message;
  } catch {
    return false;
  }
  if (m.type === 'STATE' && m.state) {
    report.states++;
    report.stateRecordCounts.push(m.state.sourceStats?.recordCount ?? 0);
    const name = m.state.stream?.stream_descriptor?.name;
    if (name !== undefined) report.lastStates[name] = m.state;
    return true;
  }
  const status = m.type === 'TRACE' && m.trace?.type === 'STREAM_STATUS' ? m.trace.stream_status : undefined;
  if (status) {
    report.statuses.push({stream: status.stream_descriptor?.name ?? '', status: status.status ?? '', at: Date.now()});
    return true;
  }
  return false;
}

const NO_BYTES = Buffer.alloc(0);
/** Start of the current line while it is shorter than PREFIX (only at chunk boundaries). */
let head: Buffer = NO_BYTES;
let kind: 'record' | 'other' | undefined;
let lineBytes = 0;
let otherParts: Buffer[] = [];
let otherSize = 0;

function endLine(): void {
  report.lines++;
  if (kind === 'record') {
    report.records++;
    report.recordBytes += lineBytes;
  } else {
    const text = Buffer.concat(otherParts).toString('utf8');
    if (structured(text)) {
      // counted above
    } else if (report.others.length < MAX_OTHERS) {
      report.others.push(text.slice(0, MAX_OTHER_CHARS));
    } else {
      report.othersDropped++;
    }
  }
  kind = undefined;
  lineBytes = 0;
  // Nothing allocated for a RECORD line: a long read's output has millions of them.
  if (head.length > 0) head = NO_BYTES;
  if (otherParts.length > 0) otherParts = [];
  otherSize = 0;
}

/** Whether chunk[pos, pos + PREFIX.length) is PREFIX: compared here, not by a call into Buffer.compare per line. */
function isRecordAt(chunk: Buffer, pos: number): boolean {
  for (let i = 0; i < PREFIX.length; i++) if (chunk[pos + i] !== PREFIX[i]) return false;
  return true;
}

function classify(isRecord: boolean): void {
  kind = isRecord ? 'record' : 'other';
  if (isRecord && report.firstRecordAt === undefined) report.firstRecordAt = Date.now();
}

function consume(chunk: Buffer): void {
  if (report.firstByteAt === undefined) report.firstByteAt = Date.now();
  report.bytes += chunk.length;
  let pos = 0;
  while (pos < chunk.length) {
    const nl = chunk.indexOf(10, pos);
    const lineEnd = nl === -1 ? chunk.length : nl;
    if (kind === undefined) {
      if (DATA_LINES) {
        classify(true);
      } else if (head.length === 0 && lineEnd - pos >= PREFIX.length) {
        // The common case: the line's start lies wholly in this chunk, no copy needed.
        classify(isRecordAt(chunk, pos));
      } else {
        const take = Math.min(PREFIX.length - head.length, lineEnd - pos);
        head = Buffer.concat([head, chunk.subarray(pos, pos + take)]);
        if (head.length === PREFIX.length) classify(head.equals(PREFIX));
        else if (nl !== -1) classify(false); // a line shorter than the prefix
      }
    }
    const end = nl === -1 ? chunk.length : nl + 1;
    lineBytes += end - pos;
    if (kind !== 'record' && otherSize < MAX_OTHER_LINE_BYTES) {
      const part = chunk.subarray(pos, lineEnd);
      otherParts.push(Buffer.from(part));
      otherSize += part.length;
    }
    pos = end;
    if (nl !== -1) endLine();
  }
}

/**
 * BENCH_PACE="stallMs,portionBytes,pauseMs": a slow destination. Nothing is read for stallMs, then
 * reading pauses for pauseMs after every portionBytes; the producer meets a full pipe again and again.
 */
const pace = process.env.BENCH_PACE?.split(',').map(Number);
if (pace) {
  const [stallMs, portionBytes, pauseMs] = pace;
  let portion = 0;
  process.stdin.pause();
  setTimeout(() => process.stdin.resume(), stallMs);
  process.stdin.on('data', (chunk: Buffer) => {
    portion += chunk.length;
    if (portion < portionBytes) return;
    portion = 0;
    process.stdin.pause();
    setTimeout(() => process.stdin.resume(), pauseMs);
  });
}
process.stdin.on('data', consume);
process.stdin.on('end', () => {
  if (lineBytes > 0) endLine(); // a last line without a newline
  report.endAt = Date.now();
  const cpu = process.cpuUsage();
  report.cpuS = (cpu.user + cpu.system) / 1e6;
  process.stdout.write(`${JSON.stringify(report)}\n`);
});
