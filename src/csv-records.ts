export interface Columns {
  /** Column names as the records carry them: the header's, made unique. */
  names: string[];
  /** Header names that appeared more than once, with the names given to the repeats. */
  renamed: {original: string; renamed: string}[];
}

/**
 * Header names as the survey shows them. Repeats get a numeric suffix (`Comment`, `Comment_2`) and a
 * blank name becomes `column_N`, so that no cell overwrites another.
 */
export function columnsFromHeader(header: readonly string[], reserved: ReadonlySet<string> = new Set()): Columns {
  const taken = new Set<string>(reserved);
  const renamed: Columns['renamed'] = [];
  const names = header.map((raw, i) => {
    const base = raw.trim() === '' ? `column_${i + 1}` : raw;
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
    if (name !== raw) renamed.push({original: raw, renamed: name});
    taken.add(name);
    return name;
  });
  return {names, renamed};
}

/**
 * Serialises rows of one stream as Airbyte RECORD lines. The parts that are the same for every
 * record (stream name, escaped column names, the connector's own fields) are built once.
 */
export class RecordEncoder {
  private readonly keys: string[];
  private readonly prefix: string;
  private readonly suffix: string;

  constructor(stream: string, columns: readonly string[], constants: Readonly<Record<string, string>>) {
    this.keys = columns.map((name, i) => `${i === 0 ? '' : ','}${JSON.stringify(name)}:`);
    this.prefix = `{"type":"RECORD","record":{"stream":${JSON.stringify(stream)},"emitted_at":`;
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
