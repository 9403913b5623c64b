import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {LIMITS} from '../../core/limits';
import {plural} from '../../core/quantities';
import {Runtime} from '../../core/runtime';
import {formatDuration} from '../../core/time';
import {RecordShape, RowWriter, StreamRef, SyncOutput} from '../output-port';

/** A stream that can repeat its STATE (StreamCheckpoints). */
export interface HeartbeatStream {
  readonly stream: StreamRef;
  /** Writes the stream's STATE again if the exactly-once rule allows one now; resolves true if it did. */
  repeatState(): Promise<boolean>;
}

/**
 * The platform's heartbeat sees life only in RECORD and STATE messages, not in LOG or TRACE: a sync
 * that waits hours for an export to be generated, or for a rate limit, looks dead to it. Watching
 * everything the read writes (through `output`), this notices a silence of LIMITS.heartbeat.silenceMs
 * and then has every stream still reading repeat its STATE, if its checkpointer allows one at that
 * moment (no record since its last STATE, so the repeat commits nothing a later attempt sends
 * again). A stream with records waiting for the end of their window stays silent: its window's end
 * brings the next STATE.
 */
export class Heartbeat {
  private lastAt: number;
  private readonly streams = new Set<HeartbeatStream>();

  constructor(
    private readonly runtime: Pick<Runtime, 'now' | 'sleep'>,
    private readonly logger: AirbyteLogger,
    private readonly silenceMs: number = LIMITS.heartbeat.silenceMs
  ) {
    this.lastAt = runtime.now();
  }

  /** `out`, with every record and STATE written through it noted as a sign of life. */
  output(out: SyncOutput): SyncOutput {
    const beat = (): void => {
      this.lastAt = this.runtime.now();
    };
    return {
      status: (stream, status) => out.status(stream, status),
      rateLimited: (stream, until) => out.rateLimited(stream, until),
      rowWriter(shape: RecordShape): RowWriter {
        const writer = out.rowWriter(shape);
        return {
          write(rows) {
            beat();
            return writer.write(rows);
          },
        };
      },
      records(stream, data) {
        beat();
        return out.records(stream, data);
      },
      state(stream, state, recordCount) {
        beat();
        return out.state(stream, state, recordCount);
      },
      error: (err, stream) => out.error(err, stream),
    };
  }

  /** The stream reads now: it may be asked to repeat its STATE. The returned function ends that. */
  watch(stream: HeartbeatStream): () => void {
    this.streams.add(stream);
    return () => this.streams.delete(stream);
  }

  /** Watches for silences until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    for (;;) {
      const wait = this.lastAt + this.silenceMs - this.runtime.now();
      try {
        if (wait > 0) {
          await this.runtime.sleep(wait, signal);
          continue;
        }
      } catch (err) {
        if (signal.aborted) return;
        throw err;
      }
      if (signal.aborted) return;
      await this.beat();
    }
  }

  private async beat(): Promise<void> {
    const silent = formatDuration(this.runtime.now() - this.lastAt);
    const repeated: string[] = [];
    for (const stream of [...this.streams]) if (await stream.repeatState()) repeated.push(stream.stream.name);
    const waiting = this.streams.size - repeated.length;
    this.logger.info(
      `No record or STATE for ${silent} (the sync is waiting for the service): ${repeated.length ? `repeated the STATE of ${plural(repeated.length, 'stream')} (${repeated.slice(0, 3).join(', ')}${repeated.length > 3 ? ', ...' : ''}) so that the platform sees the sync alive` : 'no STATE repeated'}${waiting ? `; ${plural(waiting, 'stream')} with records not yet committed by a STATE wait for the end of their window` : ''}.`
    );
    // Nothing written: ask again after another silence, not at once.
    if (!repeated.length) this.lastAt = this.runtime.now();
  }
}
