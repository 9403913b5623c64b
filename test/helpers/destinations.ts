/**
 * For tests: what an Airbyte destination names the columns of its final table, given the record
 * field names a source emits. Written from reading the Airbyte sources (airbytehq/airbyte), not
 * copied from them:
 *
 * - `Names.toAlphanumericAndUnderscore` (airbyte-commons; the same in the bulk CDK's
 *   `Transformations`, used by `StandardNameTransformer`): NFKD, combining marks (`\p{M}`) removed,
 *   each run of ASCII white space -> `_`, then each code point outside ASCII [A-Za-z0-9_] -> `_`.
 * - postgres: `toPostgresCompatibleName` (destination-postgres `PostgresNamingUtils.kt`, used by
 *   `PostgresTableSchemaMapper.toColumnName` / `PostgresColumnNameGenerator`): the transform above,
 *   `_` before a leading digit, `default_name_<random UUID>` for an empty result, and over 63
 *   characters the first 54 characters + `_` + the last 8 characters of the decimal Java
 *   `String.hashCode()` of the transformed name. Case is kept (identifiers are quoted).
 * - bigquery: `BigQuerySQLNameTransformer.convertStreamName` (via `BigqueryColumnNameGenerator`): the
 *   transform above and `_` before a first character that is not a letter or `_`; an empty result
 *   fails there (`substring(0, 1)`), which fails the sync. Collisions compare the name of the
 *   lower-cased field (the generator's canonical name).
 * - snowflake: `toSnowflakeCompatibleName` (`SnowflakeNamingUtils.kt`, `SnowflakeTableSchemaMapper`;
 *   the older `SnowflakeSqlGenerator.buildColumnId` did the same): the text is kept and upper-cased
 *   into a quoted identifier; `${` turns every `$`, `{`, `}` into `_`; an empty name is a config
 *   error.
 * - collisions: the bulk CDK's `ColumnNameResolver` (and the identical `TableCatalogFactory`
 *   logic; the typing-and-deduping `CatalogParser.resolveColumnCollisions` before them): in field
 *   order, a name that conflicts case-insensitively with an earlier column is rebuilt from
 *   `<field>_1`, `<field>_2`, …; if that makes no progress (the suffix cut away), the name becomes
 *   `<first k chars><number of chars left out><last k chars>` of the field, k = (processed name length - 5) / 2,
 *   and a remaining conflict is an error.
 *
 * Simplified or left out: the Airbyte columns every table also gets (`_airbyte_raw_id`,
 * `_airbyte_extracted_at`, `_airbyte_meta`, `_airbyte_generation_id`) are not listed, and a field
 * named like one is not detected; Postgres's random UUID is replaced by a counter so results are
 * deterministic; Snowflake's doubling of `"` is SQL quoting, so names are shown as the table has
 * them; case-insensitive comparison uses `toLowerCase`; Snowflake's reserved-word prefix of the old
 * generator (`CURRENT_DATE` -> `_CURRENT_DATE`), the raw-tables-only modes and the older
 * typing-and-deduping Postgres (`PostgresSQLNameTransformer`: a plain cut at 64 characters, then
 * `CatalogParser`'s prefix-length-suffix names for the collisions the cut causes) are not emulated. The
 * warehouses' own length limits (BigQuery 300, Snowflake 255 characters) are reported as errors.
 */

export type Destination = 'bigquery' | 'snowflake' | 'postgres';

interface ColumnName {
  /** The name the table shows. */
  display: string;
  /** What collisions are judged on. */
  canonical: string;
}

/** Names.toAlphanumericAndUnderscore, with Java's ASCII-only `\s` and `\p{Alnum}`. */
export function toAlphanumericAndUnderscore(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[ \t\n\v\f\r]+/g, '_')
    .replace(/[^A-Za-z0-9_]/gu, '_');
}

/** Java's String.hashCode(): s[0]*31^(n-1) + … + s[n-1] over UTF-16 units, in 32-bit ints. */
export function javaHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

function postgresName(field: string, fakeUuid: () => string): string {
  let t = toAlphanumericAndUnderscore(field);
  if (/^[0-9]/.test(t)) t = `_${t}`;
  if (t === '') return `default_name_${fakeUuid()}`;
  if (t.length > 63) t = `${t.slice(0, 54)}_${String(javaHashCode(t)).slice(-8)}`;
  return t;
}

function bigqueryName(field: string): string {
  const t = toAlphanumericAndUnderscore(field);
  if (t === '') throw new Error(`bigquery: empty column name from ${JSON.stringify(field)} (substring(0, 1) fails)`);
  return /^[A-Za-z_]/.test(t) ? t : `_${t}`;
}

function snowflakeName(field: string): string {
  if (field === '') throw new Error('snowflake: Empty string is invalid identifier');
  const t = field.includes('${') ? field.replace(/[${}]/g, '_') : field;
  return t.toUpperCase();
}

function namer(destination: Destination): (field: string) => ColumnName {
  switch (destination) {
    case 'postgres': {
      let uuids = 0;
      const fakeUuid = () => `00000000-0000-4000-8000-${String(++uuids).padStart(12, '0')}`;
      return (field) => {
        const display = postgresName(field, fakeUuid);
        return {display, canonical: display.toLowerCase()};
      };
    }
    case 'bigquery':
      return (field) => ({display: bigqueryName(field), canonical: bigqueryName(field.toLowerCase())});
    case 'snowflake':
      return (field) => {
        const display = snowflakeName(field);
        return {display, canonical: display.toLowerCase()};
      };
  }
}

const LIMIT: Readonly<Record<Destination, number>> = {postgres: 63, bigquery: 300, snowflake: 255};

/**
 * The final column names a destination gives these record field names, in the same order. Throws
 * where the destination would fail the sync.
 */
export function destinationColumns(names: readonly string[], destination: Destination): string[] {
  const name = namer(destination);
  const existing: ColumnName[] = [];
  const conflicts = (c: ColumnName) => existing.some((e) => e.canonical === c.canonical);

  const superResolve = (field: string, maxLength: number): ColumnName => {
    const affix = Math.trunc((maxLength - 5) / 2);
    if (affix <= 0 || field.length < affix)
      throw new Error(`${destination}: cannot solve column name collision: ${field}`);
    const rebuilt = name(`${field.slice(0, affix)}${field.length - 2 * affix}${field.slice(field.length - affix)}`);
    if (conflicts(rebuilt)) throw new Error(`${destination}: cannot solve column name collision: ${field}`);
    return rebuilt;
  };

  const resolve = (field: string): ColumnName => {
    const processed = name(field);
    if (!conflicts(processed)) return processed;
    let previous = processed;
    for (let counter = 1; ; counter++) {
      const candidate = name(`${field}_${counter}`);
      if (candidate.canonical === previous.canonical) return superResolve(field, processed.canonical.length);
      if (!conflicts(candidate)) return candidate;
      previous = candidate;
    }
  };

  return names.map((field) => {
    const column = resolve(field);
    if (column.display.length > LIMIT[destination]) {
      throw new Error(`${destination}: column name longer than ${LIMIT[destination]} characters: ${column.display}`);
    }
    existing.push(column);
    return column.display;
  });
}
