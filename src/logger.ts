import {AirbyteLogger, AirbyteLogLevel, AirbyteMessage, AirbyteMessageType} from 'faros-airbyte-cdk';

import {MessageWriter} from './output';

const LEVELS: AirbyteLogLevel[] = [
  AirbyteLogLevel.TRACE,
  AirbyteLogLevel.DEBUG,
  AirbyteLogLevel.INFO,
  AirbyteLogLevel.WARN,
  AirbyteLogLevel.ERROR,
  AirbyteLogLevel.FATAL,
];

/** Replaces every known secret (client secret, issued tokens) in a line before it leaves the process. */
export class SecretScrubber {
  private readonly secrets = new Set<string>();

  add(secret: string | undefined): void {
    // Very short values would redact ordinary words; real secrets and tokens are long.
    if (secret && secret.length >= 6) this.secrets.add(secret);
  }

  scrub(line: string): string {
    let out = line;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join('**********');
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret && out.includes(escaped)) out = out.split(escaped).join('**********');
    }
    return out;
  }
}

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

  isDebug(): boolean {
    return LEVELS.indexOf(this.level) <= LEVELS.indexOf(AirbyteLogLevel.DEBUG);
  }
}
