// The docs are read from their links: every relative link of every Markdown file in the repository must
// lead to a file that exists, and a link's #anchor to a heading of that file, as GitHub makes anchors.
// The README and the user guide are read before a first sync: they keep to a size read in minutes.

import fs from 'fs';
import path from 'path';

const ROOT = path.resolve(__dirname, '..', '..');
/** Folders that hold no docs of the project: dependencies, builds, generated test output. */
const SKIP = /^(node_modules|lib|lib\.build-.*|lib\.old-.*|coverage|demo-output|\..*)$/;

function markdownFiles(dir = ROOT): string[] {
  return fs.readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIP.test(entry.name) ? [] : markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

/** The text without fenced code blocks and inline code, where a bracket is no link. */
function prose(text: string): string {
  return text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[^`\n]*?\1/g, '');
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a file: its headings' (a repeated one gets -1, -2 …) and explicit ids. */
function anchors(file: string): Set<string> {
  const text = fs.readFileSync(file, 'utf8').replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(id);
  return found;
}

interface Link {
  file: string;
  target: string;
}

function links(file: string): Link[] {
  const text = prose(fs.readFileSync(file, 'utf8'));
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const defined = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]);
  return [...inline, ...defined].map((target) => ({file, target}));
}

/** What is wrong with a link, or undefined: only relative links are checked (a web address is not). */
function broken({file, target}: Link): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [pathPart, anchor] = target.split('#', 2);
  const to = pathPart ? path.resolve(path.dirname(file), decodeURIComponent(pathPart)) : file;
  if (!fs.existsSync(to)) return 'no such file';
  if (anchor === undefined || anchor === '') return undefined;
  if (!to.endsWith('.md')) return undefined;
  return anchors(to).has(decodeURIComponent(anchor).toLowerCase()) ? undefined : 'no such heading';
}

const FILES = markdownFiles();

test('the docs are found: README, the guide, the probe page and the design notes among them', () => {
  const names = FILES.map((f) => path.relative(ROOT, f));
  for (const doc of ['README.md', 'docs/questback.md', 'docs/probe.md', 'docs/design.md', 'docs/benchmarks.md'])
    expect(names).toContain(doc);
});

test('every relative link of every Markdown file leads to a file, and its #anchor to a heading there', () => {
  const all = FILES.flatMap(links);
  expect(all.length).toBeGreaterThan(50);
  const bad = all
    .map((link) => ({link, why: broken(link)}))
    .filter((x) => x.why)
    .map(({link, why}) => `${path.relative(ROOT, link.file)}: ${link.target} (${why})`);
  expect(bad).toEqual([]);
});

test('the link check finds a broken file, a broken anchor and a heading with code in it', () => {
  const guide = path.join(ROOT, 'docs', 'questback.md');
  expect(broken({file: guide, target: 'no-such-page.md'})).toBe('no such file');
  expect(broken({file: guide, target: 'probe.md#no-such-heading'})).toBe('no such heading');
  expect(broken({file: guide, target: '#record-changes-metachanges'})).toBeUndefined();
  expect(broken({file: guide, target: 'https://docs.airbyte.com/no-such-page'})).toBeUndefined();
  expect(slug('Record changes: `meta.changes`')).toBe('record-changes-metachanges');
  expect(slug('Step 1: Add the connector to Airbyte')).toBe('step-1-add-the-connector-to-airbyte');
});

test('the README stays within 12 KB and the user guide within 50 KB', () => {
  expect(fs.statSync(path.join(ROOT, 'README.md')).size).toBeLessThanOrEqual(12_000);
  expect(fs.statSync(path.join(ROOT, 'docs', 'questback.md')).size).toBeLessThanOrEqual(50_000);
});
