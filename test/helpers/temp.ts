import fs from 'fs';
import os from 'os';
import path from 'path';

const created: string[] = [];

/** A fresh folder in the system's temp dir, removed when the test file ends (see test/setup.ts). */
export function tempDir(prefix = 'questback-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, {recursive: true, force: true});
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}
