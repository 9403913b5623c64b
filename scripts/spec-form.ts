#!/usr/bin/env node
// Prints the connector's spec as Airbyte's setup form lists it: required fields first, then the
// optional ones (the form folds those under "Optional fields"), each group in `order`, with title,
// type, default, flags and the description wrapped.
//
//   node lib/scripts/spec-form.js [--file spec.json] [--width N]
//
// Without --file the spec is taken from the connector itself (`bin/main spec`), as the platform does.
// A field is "advanced" when its title says so (this spec's convention) or it is airbyte_hidden.

import {execFileSync} from 'child_process';
import fs from 'fs';
import path from 'path';

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
  const main = path.resolve(__dirname, '..', '..', 'bin', 'main');
  const stdout = execFileSync(process.execPath, [main, 'spec'], {encoding: 'utf8'});
  for (const line of stdout.split('\n')) {
    if (!line.trim()) continue;
    const message: unknown = JSON.parse(line);
    if (isSchema(message) && message.type === 'SPEC' && isSchema(message.spec)) return message.spec;
  }
  throw new Error(`${main} spec printed no SPEC message`);
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

function isAdvanced(schema: Schema): boolean {
  return schema.airbyte_hidden === true || /\badvanced\b/i.test(String(schema.title ?? ''));
}

function orderOf(schema: unknown): number {
  return isSchema(schema) && typeof schema.order === 'number' ? schema.order : Number.MAX_SAFE_INTEGER;
}

function renderFields(object: Schema, width: number, depth: number): string[] {
  const properties = isSchema(object.properties) ? object.properties : {};
  const required = new Set(
    Array.isArray(object.required) ? object.required.filter((r): r is string => typeof r === 'string') : []
  );
  const byOrder = (a: [string, unknown], b: [string, unknown]): number =>
    orderOf(a[1]) - orderOf(b[1]) || a[0].localeCompare(b[0]);
  const entries = Object.entries(properties).sort(byOrder);
  const groups: [string, [string, unknown][]][] = [
    ['Required', entries.filter(([name]) => required.has(name))],
    ['Optional', entries.filter(([name]) => !required.has(name))],
  ];
  const pad = '  '.repeat(depth);
  const out: string[] = [];
  for (const [heading, fields] of groups) {
    if (!fields.length) continue;
    out.push(`${pad}${heading} (${fields.length})`);
    for (const [name, value] of fields) {
      if (!isSchema(value)) continue;
      const flags = [
        required.has(name) ? 'required' : 'optional',
        ...(value.airbyte_secret === true ? ['secret'] : []),
        ...(isAdvanced(value) ? ['advanced'] : []),
      ];
      const order = typeof value.order === 'number' ? `${value.order}. ` : '- ';
      out.push(`${pad}  ${order}${String(value.title ?? name)}  [${name}]  (${flags.join(', ')})`);
      const indent = `${pad}      `;
      out.push(...wrap(`type: ${typeOf(value)}`, width, indent));
      if ('default' in value) out.push(`${indent}default: ${JSON.stringify(value.default)}`);
      if (Array.isArray(value.examples) && value.examples.length)
        out.push(`${indent}example: ${value.examples.map((e) => JSON.stringify(e)).join(', ')}`);
      if (typeof value.description === 'string') out.push(...wrap(value.description, width, indent));
      if (isSchema(value.properties)) out.push(...renderFields(value, width, depth + 3));
      if (Array.isArray(value.oneOf)) {
        value.oneOf.forEach((variant, i) => {
          if (!isSchema(variant)) return;
          out.push(`${indent}option ${i + 1}: ${String(variant.title ?? `variant ${i + 1}`)}`);
          out.push(...renderFields(variant, width, depth + 4));
        });
      }
      out.push('');
    }
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
  const lines = [
    `${String(form.title ?? 'Connector setup')}: ${properties.length} fields, ${required} required`,
    ...(typeof spec.documentationUrl === 'string' ? [`Documentation: ${spec.documentationUrl}`] : []),
    '',
    ...renderFields(form, options.width, 0),
  ];
  process.stdout.write(`${lines.join('\n').replace(/\n+$/, '')}\n`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`spec-form: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
