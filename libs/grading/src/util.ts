export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string with something other than whitespace in it. */
export function isFilled(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}
