#!/usr/bin/env node
// Prints the connector's spec as Airbyte's setup form lays it out: one card per field group (in the
// order of the spec's `groups`), in each card the required fields and those marked `always_show` in
// `order`, then the card's folded "Optional fields" section; fields marked `airbyte_hidden` are not in
// the form and are listed last, as accepted in a config file only. Each field with title, type,
// default, flags and the description wrapped.
//
//   node lib/scripts/spec-form.js [--file spec.json] [--width N]
//
// Without --file the spec is taken from the connector itself (`bin/main spec`), as the platform does.

import {execFileSync} from 'child_process';
import fs from 'fs';

import {binMainArgv, MAIN} from '../harness/bin-main';

type Schema = Record<string, unknown>;

interface Options {
  file?: string;
  width: number;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseArgs(argv: readonly string[]): Options {
  const options: Options = {width: 100};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--file') options.file = argv[++i];
    else if (arg === '--width') options.width = Number(argv[++i]);
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write('usage: node lib/scripts/spec-form.js [--file spec.json] [--width N]\n');
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  if (!Number.isInteger(options.width) || options.width < 40) throw new Error('--width needs a whole number >= 40');
  if (options.file === undefined && argv.includes('--file')) throw new Error('--file needs a path');
  return options;
}

/** The spec object: from a file (a SPEC message or the spec itself), or from `bin/main spec`. */
function loadSpec(file: string | undefined): Schema {
  if (file) {
    const raw: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (isSchema(raw) && isSchema(raw.spec)) return raw.spec;
    if (isSchema(raw)) return raw;
    throw new Error(`${file} holds no spec object`);
  }
  const stdout = execFileSync(process.execPath, binMainArgv(['spec']), {encoding: 'utf8'});
  for (const line of stdout.split('\n')) {
    if (!line.trim()) continue;
    const message: unknown = JSON.parse(line);
    if (isSchema(message) && message.type === 'SPEC' && isSchema(message.spec)) return message.spec;
  }
  throw new Error(`${MAIN} spec printed no SPEC message`);
}

function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split(/\n+/)) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line && indent.length + line.length + 1 + word.length > width) {
        lines.push(indent + line);
        line = word;
      } else {
        line = line ? `${line} ${word}` : word;
      }
    }
    if (line) lines.push(indent + line);
  }
  return lines;
}

function range(min: unknown, max: unknown, unit = ''): string {
  const u = unit ? ` ${unit}` : '';
  if (min !== undefined && max !== undefined) return ` ${String(min)}..${String(max)}${u}`;
  if (min !== undefined) return ` at least ${String(min)}${u}`;
  if (max !== undefined) return ` at most ${String(max)}${u}`;
  return '';
}

/** The type as a person reads it: "integer 1..3650", "string (date-time)", "array of string". */
function typeOf(schema: Schema): string {
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter(
    (t): t is string => typeof t === 'string' && t !== 'null'
  );
  let text = types.join(' | ') || (Array.isArray(schema.oneOf) ? 'one of' : 'any');
  if (Array.isArray(schema.type) && schema.type.includes('null')) text += ' or null';
  if (types.includes('array') && isSchema(schema.items)) {
    const count = range(schema.minItems, schema.maxItems, 'item(s)');
    return `list${count ? ` of${count}` : ''}${schema.uniqueItems === true ? ', no repeats' : ''}; each: ${typeOf(schema.items)}`;
  }
  if (typeof schema.format === 'string') text += ` (${schema.format})`;
  if (Array.isArray(schema.enum)) text += `, one of ${schema.enum.map(String).join(' | ')}`;
  if (typeof schema.pattern_descriptor === 'string') text += `, as ${schema.pattern_descriptor}`;
  else if (typeof schema.pattern === 'string') text += `, matching ${schema.pattern}`;
  return text + range(schema.minimum, schema.maximum);
}

function orderOf(schema: unknown): number {
  return isSchema(schema) && typeof schema.order === 'number' ? schema.order : Number.MAX_SAFE_INTEGER;
}

type Field = [string, Schema];

/** One field: its heading line, type, default, example and description. */
function renderField(name: string, value: Schema, required: boolean, width: number, pad: string): string[] {
  const flags = [
    required ? 'required' : 'optional',
    ...(value.airbyte_secret === true ? ['secret'] : []),
    ...(value.always_show === true ? ['always shown'] : []),
    ...(value.airbyte_hidden === true ? ['hidden'] : []),
  ];
  const order = typeof value.order === 'number' ? `${value.order}. ` : '- ';
  const out = [`${pad}${order}${String(value.title ?? name)}  [${name}]  (${flags.join(', ')})`];
  const indent = `${pad}    `;
  out.push(...wrap(`type: ${typeOf(value)}`, width, indent));
  if ('default' in value) out.push(`${indent}default: ${JSON.stringify(value.default)}`);
  else if (!required) out.push(`${indent}default: none (left empty)`);
  if (Array.isArray(value.examples) && value.examples.length)
    out.push(`${indent}example: ${value.examples.map((e) => JSON.stringify(e)).join(', ')}`);
  if (typeof value.description === 'string') out.push(...wrap(value.description, width, indent));
  if (isSchema(value.properties)) out.push(...renderObject(value, width, indent.length + 2));
  if (Array.isArray(value.oneOf)) {
    value.oneOf.forEach((variant, i) => {
      if (!isSchema(variant)) return;
      out.push(`${indent}option ${i + 1}: ${String(variant.title ?? `variant ${i + 1}`)}`);
      out.push(...renderObject(variant, width, indent.length + 4));
    });
  }
  out.push('');
  return out;
}

function fieldsOf(object: Schema): {fields: Field[]; required: Set<string>} {
  const properties = isSchema(object.properties) ? object.properties : {};
  const required = new Set(
    Array.isArray(object.required) ? object.required.filter((r): r is string => typeof r === 'string') : []
  );
  const fields = Object.entries(properties)
    .filter((entry): entry is Field => isSchema(entry[1]))
    .sort((a, b) => orderOf(a[1]) - orderOf(b[1]) || a[0].localeCompare(b[0]));
  return {fields, required};
}

/**
 * A card of the form: required and always-shown fields in order, then the folded optional ones.
 * Hidden fields are left out (the caller lists them apart).
 */
function renderCard(fields: Field[], required: Set<string>, width: number, depth: number): string[] {
  const pad = ' '.repeat(depth);
  const shown = fields.filter(([name, v]) => required.has(name) || v.always_show === true);
  const folded = fields.filter(([name, v]) => !required.has(name) && v.always_show !== true);
  const out: string[] = [];
  for (const [name, value] of shown) out.push(...renderField(name, value, required.has(name), width, `${pad}  `));
  if (folded.length) {
    out.push(`${pad}  ▸ Optional fields (${folded.length}, folded until opened)`);
    for (const [name, value] of folded) out.push(...renderField(name, value, false, width, `${pad}    `));
  }
  return out;
}

/** A nested object's fields (groups apply to top-level fields only). */
function renderObject(object: Schema, width: number, depth: number): string[] {
  const {fields, required} = fieldsOf(object);
  return renderCard(
    fields.filter(([, v]) => v.airbyte_hidden !== true),
    required,
    width,
    depth
  );
}

/** The top level: one card per group, in the order of `groups`, then undeclared groups, then hidden fields. */
function renderForm(form: Schema, width: number): string[] {
  const {fields, required} = fieldsOf(form);
  const visible = fields.filter(([, v]) => v.airbyte_hidden !== true);
  const hidden = fields.filter(([, v]) => v.airbyte_hidden === true);
  const declared = (Array.isArray(form.groups) ? form.groups : []).filter(isSchema);
  const titles = new Map(declared.map((g) => [String(g.id), typeof g.title === 'string' ? g.title : undefined]));
  const groupOf = (value: Schema): string => (typeof value.group === 'string' ? value.group : '');
  // Airbyte: declared groups in their order, then other group ids alphanumerically; a field without
  // a group gets a card of its own (shown here as one card of ungrouped fields, after the rest).
  const used = [...new Set(visible.map(([, v]) => groupOf(v)))];
  const cards = [
    ...declared.map((g) => String(g.id)).filter((id) => used.includes(id)),
    ...used.filter((id) => id !== '' && !titles.has(id)).sort(),
    ...(used.includes('') ? [''] : []),
  ];
  const out: string[] = [];
  cards.forEach((id, i) => {
    const inCard = visible.filter(([, v]) => groupOf(v) === id);
    const title = id === '' ? 'Fields without a group' : (titles.get(id) ?? `group ${id}`);
    out.push(`[${i + 1}] ${title}${id ? `  (group ${id})` : ''}`, ...renderCard(inCard, required, width, 0));
  });
  if (hidden.length) {
    out.push(`Hidden from the form (airbyte_hidden; accepted in a config file or through the API)`);
    for (const [name, value] of hidden) out.push(...renderField(name, value, required.has(name), width, '  '));
  }
  return out;
}

function main(): void {
  const options = parseArgs(process.argv.slice(2));
  const spec = loadSpec(options.file);
  const form = spec.connectionSpecification;
  if (!isSchema(form)) throw new Error('the spec has no connectionSpecification');
  const properties = isSchema(form.properties) ? Object.keys(form.properties) : [];
  const required = Array.isArray(form.required) ? form.required.length : 0;
  const hidden = isSchema(form.properties)
    ? Object.values(form.properties).filter((p) => isSchema(p) && p.airbyte_hidden === true).length
    : 0;
  const lines = [
    `${String(form.title ?? 'Connector setup')}: ${properties.length} fields, ${required} required${hidden ? `, ${hidden} hidden` : ''}`,
    ...(typeof spec.documentationUrl === 'string' ? [`Documentation: ${spec.documentationUrl}`] : []),
    '',
    ...renderForm(form, options.width),
  ];
  process.stdout.write(`${lines.join('\n').replace(/\n+$/, '')}\n`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`spec-form: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
