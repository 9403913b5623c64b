// Which streams a test means, taken from what the streams declare rather than from a list of names:
// a stream added beside the connector's (a full-refresh list, say) leaves these tests' assumptions alone.

import {layoutOfStream} from '../../src/sync/streams/catalog';
import {AirbyteMessageJson} from './protocol';
import {RecordMessage, records} from './connector';

/** A stream of the quests' responses (quest_<id>, responses or answers, as stream_layout says), not one every layout has. */
export const isResponseStream = (name: string): boolean => layoutOfStream(name) !== undefined;

/** The records of the response streams alone. */
export const responseRecords = (messages: AirbyteMessageJson[]): RecordMessage[] =>
  records(messages).filter((r) => isResponseStream(r.record.stream));

interface ListedStream {
  name: string;
}

/** The streams discover listed (its CATALOG message). */
export function discovered(messages: AirbyteMessageJson[]): ListedStream[] {
  const catalog = messages.find((m) => m.type === 'CATALOG') as {catalog?: {streams: ListedStream[]}} | undefined;
  if (!catalog?.catalog) throw new Error('discover listed no CATALOG');
  return catalog.catalog.streams;
}
