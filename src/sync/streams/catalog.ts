import {StreamLayout} from '../../core/config';
import {columnsStream} from './columns-stream';
import {invitationsStream} from './invitations-stream';
import {answersStream, ANSWERS_STREAM} from './long-stream';
import {questIdFromStreamName, questStreams} from './quest-stream';
import {RESPONSES_STREAM, responsesStream} from './responses-stream';
import {CatalogStream, DiscoverContext, StreamDefinition} from './stream-definition';

/** The kinds of stream this source has, in the order discover lists them. */
export const STREAM_DEFINITIONS: readonly StreamDefinition[] = [
  questStreams,
  responsesStream,
  answersStream,
  columnsStream,
  invitationsStream,
];

/** The catalog of the config's streams, as each definition (of the source's kinds) lists its own. */
export async function catalogStreams(
  ctx: DiscoverContext,
  definitions: readonly StreamDefinition[]
): Promise<CatalogStream[]> {
  const streams: CatalogStream[] = [];
  for (const definition of definitions) streams.push(...(await definition.discover(ctx)));
  return streams;
}

/** The stream_layout that has a stream of this name; undefined for a stream of every layout, or of none. */
export function layoutOfStream(name: string): StreamLayout | undefined {
  if (name === RESPONSES_STREAM) return 'combined';
  if (name === ANSWERS_STREAM) return 'long';
  return questIdFromStreamName(name) ? 'per_quest' : undefined;
}
