// Export settings: the accepted enumerations, their defaults, and resolution into what the CSV
// writer needs. Used both by the create-export endpoint and by groundTruth(), so both agree.

import {ExportSettings} from './types';

export const EXPORT_TYPES = ['CSV', 'EXCEL', 'SPSS'] as const;
export const VALUE_TYPES = ['ORDER_NUMBER', 'TEXT'] as const;
export const SEPARATORS: Readonly<Record<string, string>> = {
  PIPE: '|',
  COMMA: ',',
  SEMICOLON: ';',
  TAB: '\t',
};

export type ValueType = (typeof VALUE_TYPES)[number];

export interface ResolvedSettings {
  valueType: ValueType;
  expandMultipleChoice: boolean;
  includeRespondentInformation: boolean;
  separator: string;
  showOtherAsText: boolean;
}

export type FieldErrors = Record<string, string[]>;

const BOOLEAN_FIELDS = ['expandMultipleChoiceToColumns', 'includeRespondentInformation', 'showOtherAsText'] as const;

function addError(errors: FieldErrors, field: string, message: string): void {
  (errors[field] ??= []).push(message);
}

/**
 * Validates `settings` (a parsed JSON value, so anything) against the quest's languages.
 * Returns the field errors (keys like "settings.valueType") or the resolved settings.
 */
export function checkSettings(
  raw: unknown,
  languages: readonly string[]
): {errors: FieldErrors} | {settings: ResolvedSettings} {
  const errors: FieldErrors = {};
  if (raw === undefined || raw === null) return {settings: resolve({})};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    addError(errors, 'settings', 'settings must be a JSON object');
    return {errors};
  }
  const s = raw as Record<string, unknown>;

  const exportType = s.exportType;
  if (exportType !== undefined && exportType !== null) {
    if (typeof exportType !== 'string' || !(EXPORT_TYPES as readonly string[]).includes(exportType)) {
      addError(errors, 'settings.exportType', `exportType must be one of ${EXPORT_TYPES.join(', ')}`);
    } else if (exportType !== 'CSV') {
      // The simulator only writes CSV files; the real service would produce Excel/SPSS here.
      addError(errors, 'settings.exportType', `exportType ${exportType} is not supported by the simulator (only CSV)`);
    }
  }
  const valueType = s.valueType;
  if (valueType !== undefined && valueType !== null) {
    if (typeof valueType !== 'string' || !(VALUE_TYPES as readonly string[]).includes(valueType)) {
      addError(errors, 'settings.valueType', `valueType must be one of ${VALUE_TYPES.join(', ')}`);
    }
  }
  const separator = s.fieldSeparator;
  if (separator !== undefined && separator !== null) {
    if (typeof separator !== 'string' || !(separator in SEPARATORS)) {
      addError(
        errors,
        'settings.fieldSeparator',
        `fieldSeparator must be one of ${Object.keys(SEPARATORS).join(', ')}`
      );
    }
  }
  for (const field of BOOLEAN_FIELDS) {
    const v = s[field];
    if (v !== undefined && v !== null && typeof v !== 'boolean') {
      addError(errors, `settings.${field}`, `${field} must be a boolean`);
    }
  }
  const language = s.language;
  if (language !== undefined && language !== null) {
    if (typeof language !== 'string' || !languages.includes(language)) {
      addError(errors, 'settings.language', `Language '${String(language)}' is not defined on the quest`);
    }
  }
  if (Object.keys(errors).length > 0) return {errors};
  return {settings: resolve(s as ExportSettings)};
}

function resolve(s: ExportSettings): ResolvedSettings {
  return {
    valueType: (s.valueType as ValueType | undefined) ?? 'ORDER_NUMBER',
    expandMultipleChoice: s.expandMultipleChoiceToColumns ?? false,
    includeRespondentInformation: s.includeRespondentInformation ?? false,
    separator: SEPARATORS[s.fieldSeparator ?? 'PIPE'],
    showOtherAsText: s.showOtherAsText ?? false,
  };
}
