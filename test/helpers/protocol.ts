import Ajv, {ValidateFunction} from 'ajv';
import addFormats from 'ajv-formats';
import fs from 'fs';
import yaml from 'js-yaml';
import path from 'path';

/** The official Airbyte protocol schema, vendored in test/protocol (see its SOURCE.md). */
export const PROTOCOL_FILE = path.resolve(__dirname, '..', 'protocol', 'airbyte_protocol.v0.18.0.yaml');

export interface AirbyteMessageJson {
  type: string;
  [key: string]: unknown;
}

let validator: ValidateFunction | undefined;

/** The validator of `#/definitions/AirbyteMessage`, compiled once. */
function messageValidator(): ValidateFunction {
  if (validator) return validator;
  const schema = yaml.load(fs.readFileSync(PROTOCOL_FILE, 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv({strict: false, allErrors: true});
  addFormats(ajv);
  ajv.addSchema(schema, 'protocol');
  const validate = ajv.getSchema('protocol#/definitions/AirbyteMessage');
  if (!validate) throw new Error(`AirbyteMessage definition not found in ${PROTOCOL_FILE}`);
  validator = validate;
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
