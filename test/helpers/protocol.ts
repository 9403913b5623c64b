import Ajv, {ValidateFunction} from 'ajv';
import addFormats from 'ajv-formats';
import fs from 'fs';
import yaml from 'js-yaml';
import path from 'path';

/** The official protocol schema lives beside the project (../shared), never inside it. */
export const PROTOCOL_FILE = path.resolve(
  __dirname,
  '..',
  '..',
  '..',
  'shared',
  'airbyte-protocol',
  'airbyte_protocol.v0.18.0.yaml'
);

export interface AirbyteMessageJson {
  type: string;
  [key: string]: unknown;
}

let validator: ValidateFunction | null | undefined;

/**
 * The schema validator, or null when the schema is not beside the project (a clone outside the
 * workspace): then only the message structure is checked, and the test run says so once.
 */
function messageValidator(): ValidateFunction | null {
  if (validator !== undefined) return validator;
  if (!fs.existsSync(PROTOCOL_FILE)) {
    process.stderr.write(
      `\nNOTE: the Airbyte protocol schema is not at ${PROTOCOL_FILE} (../shared/airbyte-protocol beside the project); ` +
        'messages are checked for their structure only, not against the official schema.\n'
    );
    validator = null;
    return validator;
  }
  const schema = yaml.load(fs.readFileSync(PROTOCOL_FILE, 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv({strict: false, allErrors: true});
  addFormats(ajv);
  ajv.addSchema(schema, 'protocol');
  validator = ajv.getSchema('protocol#/definitions/AirbyteMessage');
  if (!validator) throw new Error('AirbyteMessage definition not found in the protocol schema');
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
  if (validate && !validate(message))
    errors.push(...(validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
  const payload = PAYLOAD[message.type];
  if (!payload) errors.push(`unknown type ${message.type}`);
  else if (message[payload] === undefined) errors.push(`${message.type} without ${payload}`);
  for (const key of Object.keys(message)) {
    if (key !== 'type' && key !== payload) errors.push(`unexpected member ${key} in ${message.type}`);
  }
  return errors;
}
