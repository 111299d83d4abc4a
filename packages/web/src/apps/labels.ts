// Message keys of the platform's enumerations: a value the platform adds is
// a compile error here until it has its label.
import type { AppExtractField, AppSettings } from '../api';
import type { MessageKey } from '../i18n';

export type SearchMode = AppSettings['search']['searchMode'];
export type FieldType = AppExtractField['type'];

export const SEARCH_MODE_KEYS: Record<SearchMode, MessageKey> = {
  mixedRecall: 'apps.search.mode.mixedRecall',
  embedding: 'apps.search.mode.embedding',
  fullTextRecall: 'apps.search.mode.fullTextRecall',
};

export const FIELD_TYPE_KEYS: Record<FieldType, MessageKey> = {
  string: 'apps.extract.type.string',
  number: 'apps.extract.type.number',
  boolean: 'apps.extract.type.boolean',
};

/** Select options from one of the tables above, in its order. */
export function optionsOf<K extends string>(table: Record<K, MessageKey>, t: (key: MessageKey) => string): { value: K; label: string }[] {
  return (Object.keys(table) as K[]).map((value) => ({ value, label: t(table[value]) }));
}
