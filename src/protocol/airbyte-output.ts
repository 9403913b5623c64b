import VError from 'verror';

import {errorContext, errorMessage, failureTypeOf} from '../core/errors';
import {Runtime} from '../core/runtime';
import {RecordShape, RowWriter, StreamRef, StreamStatus, SyncOutput} from '../sync/output-port';
import {errorTrace, rateLimitedReason, recordMessage, streamState, streamStatus} from './messages';
import {MessageWriter} from './output';
import {recordEncoder} from './long-record-encoder';
import {quote} from '../core/outside-text';

const INTERNAL_MESSAGE_MAX = 500;

/** What a read emits, as Airbyte protocol messages on the writer. */
export class AirbyteOutput implements SyncOutput {
  constructor(
    private readonly writer: MessageWriter,
    private readonly runtime: Runtime
  ) {}

  status(stream: StreamRef, status: StreamStatus): void {
    void this.writer.write(streamStatus(stream, status, this.runtime.now()));
  }

  rateLimited(stream: StreamRef, until: number): void {
    void this.writer.write(streamStatus(stream, 'RUNNING', this.runtime.now(), [rateLimitedReason(until)]));
  }

  rowWriter(shape: RecordShape): RowWriter {
    const encoder = recordEncoder(shape);
    return {write: (rows) => this.writer.writeRecords(rows, encoder, this.runtime.now())};
  }

  async records(stream: StreamRef, data: readonly object[]): Promise<void> {
    const at = this.runtime.now();
    for (const d of data) await this.writer.writeLine(JSON.stringify(recordMessage(stream, d, at)));
  }

  state(stream: StreamRef, state: object, recordCount: number): Promise<void> {
    return this.writer.writeNow(streamState(stream, state, recordCount));
  }

  /** Writes out everything queued. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  async error(err: Error, stream?: StreamRef): Promise<void> {
    const context = errorContext(err);
    delete context.failureType;
    await this.writer.writeNow(
      errorTrace(errorMessage(err), failureTypeOf(err), this.runtime.now(), {
        ...(stream ? {stream} : {}),
        // Bounded as any quotation: the context may hold outside text (a catalog's stream name of megabytes).
        internalMessage: quote(context, INTERNAL_MESSAGE_MAX),
        stackTrace: VError.fullStack(err),
      })
    );
  }
}
