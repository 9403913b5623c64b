import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';
import {AirbyteLogLevel, AirbyteMessage, AirbyteMessageType} from 'faros-airbyte-cdk/lib/protocol';

import {MessageWriter} from './output';

// The scrubber lives in core, where config validation uses it before the logger exists.
export {SecretScrubber, secretForms} from '../core/secrets';

const LEVELS: AirbyteLogLevel[] = [
  AirbyteLogLevel.TRACE,
  AirbyteLogLevel.DEBUG,
  AirbyteLogLevel.INFO,
  AirbyteLogLevel.WARN,
  AirbyteLogLevel.ERROR,
  AirbyteLogLevel.FATAL,
];

/**
 * The kit's logger, writing through our batched writer so that logs, records, states and traces
 * keep their order on stdout, and every line passes the secret scrubber.
 */
export class ConnectorLogger extends AirbyteLogger {
  constructor(
    private readonly writer: MessageWriter,
    level?: AirbyteLogLevel
  ) {
    super(level);
  }

  override write(msg: AirbyteMessage): void {
    if (msg.type === AirbyteMessageType.LOG) {
      const level = (msg as unknown as {log: {level: AirbyteLogLevel}}).log.level;
      if (LEVELS.indexOf(level) < LEVELS.indexOf(this.level)) return;
    }
    void this.writer.write(msg);
  }
}
