import type Ajv from 'ajv';
import type {ValidateFunction} from 'ajv';
import crypto from 'crypto';
import fs from 'fs';
import path from 'path';

/** The official Airbyte protocol schema, vendored in test/protocol (see its SOURCE.md). */
export const PROTOCOL_FILE = path.resolve(__dirname, '..', 'protocol', 'airbyte_protocol.v0.18.0.yaml');

export interface AirbyteMessageJson {
  type: string;
  [key: string]: unknown;
}

let validator: ValidateFunction | undefined;

/**
 * Where the validator's compiled code is kept between test files: compiling the protocol schema
 * costs each file about 0.2 s of CPU, loading the code a few ms. Keyed by the schema and the Ajv
 * version; inside node_modules, so that the code's requires of Ajv's runtime resolve.
 */
function cachedValidatorFile(schemaText: string): string {
  const versions = ['ajv', 'ajv-formats']
    .map(
      (name) =>
        (JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {version: string}).version
    )
    .join('+');
  const key = crypto.createHash('sha256').update(`${versions}\n${schemaText}`).digest('hex').slice(0, 16);
  return path.resolve(__dirname, '..', '..', 'node_modules', '.cache', 'questback-tests', `protocol-${key}.js`);
}

/**
 * Compiles `#/definitions/AirbyteMessage` of the protocol schema, with its code when `source`. Ajv, its
 * formats and the YAML parser are loaded here, not at the top: with the cached code no test file but the
 * first loads them (about 70 modules, 0.1 s of CPU a file).
 */
function compile(schemaText: string, source: boolean): {ajv: Ajv; validate: ValidateFunction} {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const {default: Ajv, _} = require('ajv') as typeof import('ajv');
  const addFormats = (require('ajv-formats') as typeof import('ajv-formats')).default;
  const yaml = require('js-yaml') as typeof import('js-yaml');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const schema = yaml.load(schemaText) as Record<string, unknown>;
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    ...(source ? {code: {source: true, formats: _`require("ajv-formats/dist/formats").fullFormats`}} : {}),
  });
  addFormats(ajv);
  ajv.addSchema(schema, 'protocol');
  const validate = ajv.getSchema('protocol#/definitions/AirbyteMessage');
  if (!validate) throw new Error(`AirbyteMessage definition not found in ${PROTOCOL_FILE}`);
  return {ajv, validate};
}

/** The validator of `#/definitions/AirbyteMessage`, compiled once (and its code cached for the next files). */
function messageValidator(): ValidateFunction {
  if (validator) return validator;
  const schemaText = fs.readFileSync(PROTOCOL_FILE, 'utf8');
  const file = cachedValidatorFile(schemaText);
  try {
    if (!fs.existsSync(file)) {
      const {ajv, validate} = compile(schemaText, true);
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only to write the code (see compile)
      const standaloneCode = (require('ajv/dist/standalone') as typeof import('ajv/dist/standalone')).default;
      fs.mkdirSync(path.dirname(file), {recursive: true});
      // Written aside, then renamed: test files compiling side by side never read half a file.
      const partial = `${file}.${process.pid}`;
      fs.writeFileSync(partial, standaloneCode(ajv, validate));
      fs.renameSync(partial, file);
    }
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- generated code, loaded by path
    validator = require(file) as ValidateFunction;
  } catch {
    // A read-only checkout: compile here, as every file did before.
    validator = compile(schemaText, false).validate;
  }
  return validator;
}

const PAYLOAD: Record<string, string> = {
  RECORD: 'record',
  STATE: 'state',
  LOG: 'log',
  SPEC: 'spec',
  CONNECTION_STATUS: 'connectionStatus',
  CATALOG: 'catalog',
  TRACE: 'trace',
  CONTROL: 'control',
};

/** Errors of one stdout line as an AirbyteMessage: schema, and the payload its type names. */
export function messageErrors(line: string): string[] {
  let message: AirbyteMessageJson;
  try {
    message = JSON.parse(line);
  } catch {
    return [`not JSON: ${line.slice(0, 200)}`];
  }
  const validate = messageValidator();
  const errors: string[] = [];
  if (typeof message !== 'object' || message === null || Array.isArray(message))
    return [`not a JSON object: ${line.slice(0, 200)}`];
  if (!validate(message)) errors.push(...(validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
  const payload = PAYLOAD[message.type];
  if (!payload) errors.push(`unknown type ${message.type}`);
  else if (message[payload] === undefined) errors.push(`${message.type} without ${payload}`);
  for (const key of Object.keys(message)) {
    if (key !== 'type' && key !== payload) errors.push(`unexpected member ${key} in ${message.type}`);
  }
  return errors;
}
