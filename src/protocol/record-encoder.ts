import {StreamRef} from '../sync/output-port';

/**
 * Serialises rows of one stream as Airbyte RECORD lines. The parts that are the same for every
 * record (stream name and namespace, escaped column names, the connector's own fields) are built once.
 */
export class RecordEncoder {
  private readonly keys: string[];
  private readonly prefix: string;
  private readonly suffix: string;

  constructor(stream: StreamRef, columns: readonly string[], constants: Readonly<Record<string, string>>) {
    this.keys = columns.map((name, i) => `${i === 0 ? '' : ','}${JSON.stringify(name)}:`);
    const namespace = stream.namespace ? `"namespace":${JSON.stringify(stream.namespace)},` : '';
    this.prefix = `{"type":"RECORD","record":{${namespace}"stream":${JSON.stringify(stream.name)},"emitted_at":`;
    const extra = JSON.stringify(constants).slice(1, -1);
    this.suffix = `${columns.length && extra ? ',' : ''}${extra}}}}`;
  }

  /** Empty cells become null: the CSV cannot tell an empty answer from none. */
  encode(row: readonly string[], emittedAt: number): string {
    let line = `${this.prefix}${emittedAt},"data":{`;
    const keys = this.keys;
    for (let i = 0; i < keys.length; i++) {
      const cell = row[i];
      line += keys[i] + (cell === '' || cell === undefined ? 'null' : JSON.stringify(cell));
    }
    return line + this.suffix;
  }
}
