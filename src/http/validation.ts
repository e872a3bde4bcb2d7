import { FormatRegistry, Kind, Type, type TLiteral, type TSchema, type TString, type TUnion } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { ApiError, isFieldFormat, type FieldFormat, type FieldRule, type JsonType } from './failures.js';

/** A string field restricted to a fixed set of values (validated, typed and documented as one). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );
}

/** Options a formatted string schema may carry besides its format. */
export interface FormattedStringOptions {
  minLength?: number;
  maxLength?: number;
  description?: string;
}

/** A factory of string schemas in one registered format. */
export type FormatSchema = (options?: FormattedStringOptions) => TString;

/**
 * Registers a named format's check (each is described to merchants by FieldFormat's texts) and
 * returns the factory of schemas that use it, so a schema can only name a format whose check is
 * registered. The module that owns the rule defines it. Formats that depend on another field (a CPF
 * when personIdType is CPF) are checked by the endpoint and reported with the same texts.
 */
export function defineFormat(name: FieldFormat, check: (value: string) => boolean): FormatSchema {
  FormatRegistry.Set(name, check);
  return (options = {}) => Type.String({ format: name, ...options });
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const IDENTIFIER = /^(?![\s\u00a0])[^\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]*(?<![\s\u00a0])$/u;

/**
 * An identifier a merchant chooses (externalOrderId, userIdentity): kept and compared exactly as
 * sent, so nothing in it may be invisible or change how it reads: no control characters (C0, DEL,
 * C1), no bidirectional controls (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), and no
 * space at either end.
 */
function isIdentifier(value: string): boolean {
  return IDENTIFIER.test(value);
}

/** The generic named formats, which belong to no domain module. */
const GENERIC_FORMATS = {
  url: defineFormat('url', isHttpUrl),
  currencyCode: defineFormat('currencyCode', (value) => /^[A-Z]{3}$/.test(value)),
  identifier: defineFormat('identifier', isIdentifier),
};

export type SchemaFormat = keyof typeof GENERIC_FORMATS;

/** A string in one of the generic named formats (a domain format is made by the factory its module defines). */
export function FormattedString(format: SchemaFormat, options: FormattedStringOptions = {}): TString {
  return GENERIC_FORMATS[format](options);
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checkerFor(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (check === undefined) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

function fieldName(path: string): string {
  return path.replace(/^\//, '').replaceAll('/', '.') || '(body)';
}

const TYPE_ERRORS: Partial<Record<ValueErrorType, JsonType>> = {
  [ValueErrorType.String]: 'string',
  [ValueErrorType.Integer]: 'integer',
  [ValueErrorType.Number]: 'number',
  [ValueErrorType.Boolean]: 'boolean',
  [ValueErrorType.Object]: 'object',
  [ValueErrorType.Array]: 'array',
  [ValueErrorType.Null]: 'null',
};

function literalValues(schema: TSchema): string[] | undefined {
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf;
  if (!Array.isArray(anyOf) || !anyOf.every((s) => s[Kind] === 'Literal')) return undefined;
  return anyOf.map((s) => String((s as TLiteral).const));
}

/** The broken rule behind a TypeBox error; `path` is where it was found (a union may point deeper). */
function ruleOf(error: ValueError): { path: string; rule: FieldRule } {
  const schema = error.schema as Record<string, unknown>;
  const at = (rule: FieldRule) => ({ path: error.path, rule });
  const expected = TYPE_ERRORS[error.type];
  if (expected !== undefined) return at({ rule: 'type', expected: [expected] });
  switch (error.type) {
    case ValueErrorType.StringMaxLength:
      return at({ rule: 'maxLength', max: Number(schema.maxLength) });
    case ValueErrorType.StringMinLength:
      return at({ rule: 'minLength', min: Number(schema.minLength) });
    case ValueErrorType.ArrayMinItems:
      return at({ rule: 'minItems', min: Number(schema.minItems) });
    case ValueErrorType.ArrayMaxItems:
      return at({ rule: 'maxItems', max: Number(schema.maxItems) });
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return at({ rule: 'minimum', min: Number(schema.minimum) });
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return at({ rule: 'maximum', max: Number(schema.maximum) });
    case ValueErrorType.Literal:
      return at({ rule: 'oneOf', allowed: [String(schema.const)] });
    case ValueErrorType.StringFormat:
      if (typeof schema.format === 'string' && isFieldFormat(schema.format)) {
        return at({ rule: 'format', format: schema.format });
      }
      break;
    case ValueErrorType.Union:
      return unionRule(error);
    default:
      break;
  }
  return at({ rule: 'invalid' });
}

/**
 * A union fails when every variant fails. When the value had the right type for one variant, that
 * variant's rule is the one to report; otherwise the value had a wrong type and every type is listed.
 */
function unionRule(error: ValueError): { path: string; rule: FieldRule } {
  const allowed = literalValues(error.schema);
  if (allowed !== undefined) return { path: error.path, rule: { rule: 'oneOf', allowed } };
  const firsts = error.errors.map((variant) => variant.First()).filter((e): e is ValueError => e !== undefined);
  const specific = firsts.find((e) => TYPE_ERRORS[e.type] === undefined);
  if (specific !== undefined) return ruleOf(specific);
  const types = firsts.map((e) => TYPE_ERRORS[e.type]).filter((t): t is JsonType => t !== undefined);
  return {
    path: error.path,
    rule: types.length > 0 ? { rule: 'type', expected: [...new Set(types)] } : { rule: 'invalid' },
  };
}

/** A maxLength counted in UTF-16 units that the text meets in characters (an emoji is one character, two units). */
function countsCharacters(error: ValueError): boolean {
  return (
    error.type === ValueErrorType.StringMaxLength &&
    typeof error.value === 'string' &&
    Array.from(error.value).length <= Number((error.schema as { maxLength?: number }).maxLength)
  );
}

/** The first broken rule; lengths are counted in characters, as the spec's limits are. */
function firstError(schema: TSchema, input: unknown): ValueError | undefined {
  for (const error of checkerFor(schema).Errors(input)) {
    if (!countsCharacters(error)) return error;
  }
  return undefined;
}

/**
 * Validates a request body or query against its schema. Unknown top-level members are refused by
 * name (a typo must not pass silently); a missing member is "required"; otherwise the first broken
 * rule is reported with the field it belongs to.
 */
export function validateInput(schema: TSchema, input: unknown): ApiError | undefined {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties;
  if (properties !== undefined) {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return new ApiError({ kind: 'body_not_object' });
    }
    const unknown = Object.keys(input).filter((key) => !Object.hasOwn(properties, key));
    if (unknown.length > 0) return new ApiError({ kind: 'unknown_fields', fields: unknown.sort() });
    const required = (schema as { required?: string[] }).required ?? [];
    const missing = required.find(
      (key) => !Object.hasOwn(input, key) || (input as Record<string, unknown>)[key] === undefined,
    );
    if (missing !== undefined) {
      return new ApiError({ kind: 'invalid_field', field: missing, rule: { rule: 'required' } });
    }
  }
  const first = firstError(schema, input);
  if (first === undefined) return undefined;
  if (first.type === ValueErrorType.ObjectRequiredProperty) {
    return new ApiError({ kind: 'invalid_field', field: fieldName(first.path), rule: { rule: 'required' } });
  }
  if (first.type === ValueErrorType.ObjectAdditionalProperties) {
    const extra = Object.keys((first.value as object | null) ?? {});
    return new ApiError({ kind: 'unknown_fields', fields: extra.map((k) => `${fieldName(first.path)}.${k}`) });
  }
  const { path, rule } = ruleOf(first);
  return new ApiError({ kind: 'invalid_field', field: fieldName(path), rule });
}
