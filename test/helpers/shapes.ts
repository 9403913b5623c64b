// What a record shape means, as objects: the records and changes a shape makes of a row, written
// plainly; the protocol layer's encoders (which write the same JSON from bytes) are held to them.

import {keyedHash} from '../../src/core/keyed-hash';
import {rfc3339} from '../../src/core/time-text';
import {cellNumber, RecordChange, RecordField, RecordShape, unreadableTime} from '../../src/sync/output-port';

function cellValue(row: readonly string[], index: number, salt?: string): string | null {
  const cell = row[index];
  if (cell === undefined || cell === '') return null;
  return salt === undefined ? cell : keyedHash(salt, cell);
}

/**
 * The records a shape makes of a row, as objects: the meaning of a shape. The protocol layer's
 * encoder writes the same JSON values (unit/output holds it to that), their keys in the shape's order
 * (JSON.stringify of such an object would put integer-like keys first). The encoder writes a
 * number as the cell's text, digit for digit; here it is that text parsed as JSON parses it.
 */
export function shapeRecords(shape: RecordShape, row: readonly string[]): Record<string, unknown>[] {
  const data: Record<string, unknown> = Object.create(null);
  const salt = (hash?: boolean): string | undefined => (hash ? shape.hashSalt : undefined);
  let answer: Extract<RecordField, {kind: 'answer'}> | undefined;
  const after: Exclude<RecordField, {kind: 'answer'}>[] = [];
  for (const field of shape.fields) {
    if (field.kind === 'answer') answer ??= field;
    else if (answer) after.push(field);
    else Object.assign(data, fieldValue(field, row, salt));
  }
  if (!answer) return [data];
  const {value, number} = answer;
  return answer.cells.flatMap((cell) => {
    const text = cellValue(row, cell.index, salt(cell.hash));
    if (text === null) return [];
    const record: Record<string, unknown> = Object.assign(Object.create(null), data);
    for (const c of cell.constants) record[c.name] = c.value;
    record[value] = text;
    record[number] = cell.hash ? null : cellNumber(text);
    for (const field of after) Object.assign(record, fieldValue(field, row, salt));
    return [record];
  });
}

function fieldValue(
  field: Exclude<RecordField, {kind: 'answer'}>,
  row: readonly string[],
  salt: (hash?: boolean) => string | undefined
): Record<string, unknown> {
  if (field.kind === 'cell') return {[field.name]: cellValue(row, field.index, salt(field.hash))};
  if (field.kind === 'text') return {[field.name]: row[field.index] ?? null};
  if (field.kind === 'time') return {[field.name]: timeOf(row, field.index)};
  if (field.kind === 'constant') return {[field.name]: field.value};
  // A null prototype: a header text such as "__proto__" is a key like any other.
  const cells: Record<string, string | null> = Object.create(null);
  for (const c of field.cells) cells[c.key] = cellValue(row, c.index, salt(c.hash));
  return {[field.name]: cells};
}

function timeOf(row: readonly string[], index: number): string | null {
  const cell = cellValue(row, index);
  return cell === null ? null : (rfc3339(cell) ?? null);
}

/**
 * The changes each record a shape makes of a row carries in its `meta.changes`, in field order (for a
 * long shape, every answer's record carries those of the row's fields).
 */
export function shapeChanges(shape: RecordShape, row: readonly string[]): RecordChange[] {
  return shape.fields.flatMap((field) =>
    field.kind === 'time' && cellValue(row, field.index) !== null && timeOf(row, field.index) === null
      ? [unreadableTime(field.name)]
      : []
  );
}
