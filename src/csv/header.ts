interface Columns {
  /** Column names as the records carry them: the header's, made unique. */
  names: string[];
  /** Header names that appeared more than once, with the names given to the repeats. */
  renamed: {original: string; renamed: string}[];
}

/**
 * Header names as the survey shows them. Repeats get a numeric suffix (`Comment`, `Comment_2`) and a
 * blank name becomes `column_N`, so that no cell overwrites another.
 */
export function columnsFromHeader(header: readonly string[], reserved: ReadonlySet<string> = new Set()): Columns {
  const taken = new Set<string>(reserved);
  const renamed: Columns['renamed'] = [];
  const names = header.map((raw, i) => {
    const base = raw.trim() === '' ? `column_${i + 1}` : raw;
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
    if (name !== raw) renamed.push({original: raw, renamed: name});
    taken.add(name);
    return name;
  });
  return {names, renamed};
}

/**
 * Whether a header text is the response id column ("Response ID", "ResponseId", "response_id"...): the
 * natural primary key of a quest's rows.
 */
export function isResponseIdHeader(text: string): boolean {
  return text.toLowerCase().replace(/[^a-z]/g, '') === 'responseid';
}

/** Whether a header text is `Created` (any case): the response's creation time, which since/until compare. */
export function isCreatedHeader(text: string): boolean {
  return /^created$/i.test(text.trim());
}

/** The columns every header holds, by the names the connector reads them by: each row's identity and its time. */
type HeaderColumn = 'Response ID' | 'Created';

/**
 * The columns a file's first line lacks to be a header (empty: it is one). A header must hold the
 * Response ID and the Created column: a file without its header row would otherwise make its first
 * respondent's answers column names, so a line is taken as a header only once it holds both.
 */
export function missingHeaderColumns(cells: readonly string[]): HeaderColumn[] {
  return [
    ...(cells.some(isResponseIdHeader) ? [] : ['Response ID' as const]),
    ...(cells.some(isCreatedHeader) ? [] : ['Created' as const]),
  ];
}
