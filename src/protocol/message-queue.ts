import {AirbyteMessage} from 'faros-airbyte-cdk/lib/protocol';

import {Runtime} from '../core/runtime';
import {RecordShape, RowWriter, StreamRef, StreamStatus, SyncOutput} from '../sync/output-port';
import {AirbyteOutput} from './airbyte-output';
import {MessageWriter} from './output';

/** Messages a pull consumer has not taken yet before the read waits for it. */
const HIGH_WATER = 1000;

/**
 * The read's output as a queue of message objects, for the kit's pull interface (an async generator
 * of AirbyteMessages). The same AirbyteOutput builds the lines; they are parsed back into objects.
 * Writers wait while the consumer is behind, so memory stays bounded.
 */
export class MessageQueue implements SyncOutput {
  private readonly lines: string[] = [];
  private readonly output: AirbyteOutput;
  private taken: (() => void) | undefined;
  private arrived: (() => void) | undefined;
  private space: Promise<void> | undefined;

  constructor(runtime: Runtime) {
    const sink = {
      write: (chunk: Buffer): boolean => {
        for (const line of chunk.toString('utf8').split('\n')) if (line) this.lines.push(line);
        this.arrived?.();
        return true;
      },
    } as unknown as NodeJS.WritableStream;
    this.output = new AirbyteOutput(new MessageWriter(sink, (l) => l, 1), runtime);
  }

  status(stream: StreamRef, status: StreamStatus): void {
    this.output.status(stream, status);
  }

  rateLimited(stream: StreamRef, until: number): void {
    this.output.rateLimited(stream, until);
  }

  rowWriter(shape: RecordShape): RowWriter {
    const writer = this.output.rowWriter(shape);
    return {write: (rows) => writer.write(rows) ?? this.backpressure()};
  }

  async records(stream: StreamRef, data: readonly object[]): Promise<void> {
    await this.output.records(stream, data);
    await this.backpressure();
  }

  state(stream: StreamRef, state: object, recordCount: number): Promise<void> {
    return this.output.state(stream, state, recordCount);
  }

  error(err: Error, stream?: StreamRef): Promise<void> {
    return this.output.error(err, stream);
  }

  /** Yields every message until `done` settles, then what is left. */
  async *drain(done: Promise<unknown>): AsyncGenerator<AirbyteMessage> {
    let finished = false;
    const end = (): void => {
      finished = true;
      this.arrived?.();
    };
    done.then(
      () => this.output.flush().then(end),
      () => this.output.flush().then(end)
    );
    for (;;) {
      while (this.lines.length) {
        yield JSON.parse(this.lines.shift() as string) as AirbyteMessage;
        if (this.lines.length < HIGH_WATER / 2) this.taken?.();
      }
      if (finished) return;
      await new Promise<void>((resolve) => (this.arrived = resolve));
    }
  }

  private backpressure(): Promise<void> | undefined {
    if (this.lines.length < HIGH_WATER) return undefined;
    this.space ??= new Promise<void>((resolve) => {
      this.taken = () => {
        this.space = undefined;
        this.taken = undefined;
        resolve();
      };
    });
    return this.space;
  }
}
