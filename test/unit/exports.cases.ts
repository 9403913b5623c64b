// No export of src/ that nothing imports: an export is there for another file (of src/, the scripts,
// the simulator, the harness or the tests), or it is not an export. src/index.ts, the package's
// entry point, is exempt. Read from the sources' syntax (imports and re-exports of relative paths, and
// compiled modules required by their lib/ path).

import fs from 'fs';
import path from 'path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const FOLDERS = ['src', 'scripts', 'simulator', 'harness', 'test'];
const ENTRY = 'src/index.ts';

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), {withFileTypes: true}).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(file);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** The project file a relative module specifier names, if it is one. */
function target(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  return [`${base}.ts`, `${base}/index.ts`].find((file) => fs.existsSync(path.join(ROOT, file)));
}

function exportedNames(statement: ts.Statement): string[] {
  const modifiers = ts.canHaveModifiers(statement) ? (ts.getModifiers(statement) ?? []) : [];
  if (!modifiers.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) return [];
  if (ts.isVariableStatement(statement)) return statement.declarationList.declarations.map((d) => d.name.getText());
  const name = (statement as ts.DeclarationStatement).name;
  return name ? [name.getText()] : [];
}

/** Every export of src/ (file: name) that no other file imports. */
export function unusedExports(): string[] {
  const declared = new Map<string, string[]>();
  const imported = new Map<string, Set<string>>();
  const use = (file: string, name: string) =>
    (imported.get(file) ?? imported.set(file, new Set()).get(file))?.add(name);
  for (const file of FOLDERS.flatMap(sources)) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    declared.set(file, source.statements.flatMap(exportedNames));
    // A compiled module required by its path (lib/src/...js): taken as using all it exports.
    for (const [, compiled] of text.matchAll(/lib\/(src\/[\w/.-]+)\.js/g)) use(`${compiled}.ts`, '*');
    for (const statement of source.statements) {
      if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))) continue;
      const specifier = statement.moduleSpecifier;
      const from = specifier && ts.isStringLiteral(specifier) ? target(file, specifier.text) : undefined;
      if (!from) continue;
      const bindings = ts.isImportDeclaration(statement)
        ? statement.importClause?.namedBindings
        : statement.exportClause;
      if (ts.isImportDeclaration(statement) && statement.importClause?.name) use(from, 'default');
      if (!bindings || ts.isNamespaceImport(bindings) || ts.isNamespaceExport(bindings)) use(from, '*');
      else for (const element of bindings.elements) use(from, (element.propertyName ?? element.name).getText());
    }
  }
  return [...declared].flatMap(([file, names]) => {
    if (!file.startsWith('src/') || file === ENTRY || imported.get(file)?.has('*')) return [];
    return names.filter((name) => !imported.get(file)?.has(name)).map((name) => `${file}: ${name}`);
  });
}

test('every export of src/ is imported by another file', () => {
  expect(unusedExports()).toEqual([]);
});
