import fs from 'fs';
import path from 'path';
import VError from 'verror';

/** A file of the project (resources/spec.json, package.json), from the compiled lib/src/core as from the sources (tests). */
export function projectFile(relative: string): string {
  const candidates = [
    path.resolve(__dirname, '..', '..', relative),
    path.resolve(__dirname, '..', '..', '..', relative),
  ];
  const found = candidates.find((file) => fs.existsSync(file));
  if (!found) throw new VError('%s not found beside %s', relative, __dirname);
  return found;
}
