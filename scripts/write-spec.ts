#!/usr/bin/env node
// Writes resources/spec.json from the spec's declaration (src/core/spec-declaration.ts), formatted as
// prettier formats the project's JSON; a test (unit/config) fails while the file is not current, and
// npm run lint while it is not formatted.
//
//   npm run spec

import fs from 'fs';
import prettier from 'prettier';

import {projectFile} from '../src/core/project-file';
import {connectorSpec} from '../src/core/spec';

const SPEC_FILE = projectFile('resources/spec.json');

/** resources/spec.json as it should be: the connector's spec, as its `spec` command prints it. */
async function specFileText(): Promise<string> {
  const options = (await prettier.resolveConfig(SPEC_FILE)) ?? {};
  return prettier.format(JSON.stringify(connectorSpec()), {...options, filepath: SPEC_FILE});
}

specFileText().then(
  (text) => fs.writeFileSync(SPEC_FILE, text),
  (err: unknown) => {
    process.stderr.write(`write-spec: ${String(err)}\n`);
    process.exitCode = 1;
  }
);
