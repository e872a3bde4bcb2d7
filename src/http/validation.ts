import { FormatRegistry, Kind, Type, type TSchema, type TLiteral, type TUnion } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { whitelistEntryProblem } from '../auth/ip-whitelist.js';
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

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Every named format a schema may use; each is described to merchants by FieldFormat's texts. */
const FORMATS: Record<FieldFormat, (value: string) => boolean> = {
  url: isHttpUrl,
  currencyCode: (value) => /^[A-Z]{3}$/.test(value),
  ipOrCidr: (value) => whitelistEntryProblem(value) === undefined,
};
for (const [name, check] of Object.entries(FORMATS)) FormatRegistry.Set(name, check);

/** A string in one of the named formats. */
export function FormattedString(format: FieldFormat, options: { maxLength?: number; description?: string } = {}) {
  return Type.String({ format, ...options });
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
};

function literalValues(schema: TSchema): string[] | undefined {
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf;
  if (!Array.isArray(anyOf) || !anyOf.every((s) => s[Kind] === 'Literal')) return undefined;
  return anyOf.map((s) => String((s as TLiteral).const));
}

function ruleOf(error: ValueError): FieldRule {
  const schema = error.schema as Record<string, unknown>;
  const expected = TYPE_ERRORS[error.type];
  if (expected !== undefined) return { rule: 'type', expected };
  switch (error.type) {
    case ValueErrorType.StringMaxLength:
      return { rule: 'maxLength', max: Number(schema.maxLength) };
    case ValueErrorType.StringMinLength:
      return { rule: 'minLength', min: Number(schema.minLength) };
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return { rule: 'minimum', min: Number(schema.minimum) };
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return { rule: 'maximum', max: Number(schema.maximum) };
    case ValueErrorType.Literal:
      return { rule: 'oneOf', allowed: [String(schema.const)] };
    case ValueErrorType.Union: {
      const allowed = literalValues(error.schema);
      if (allowed !== undefined) return { rule: 'oneOf', allowed };
      break;
    }
    default:
      break;
  }
  const format = schema.format;
  if (error.type === ValueErrorType.StringFormat && typeof format === 'string' && isFieldFormat(format)) {
    return { rule: 'format', format };
  }
  throw new Error(`no field rule for TypeBox error ${error.type} at ${error.path}: ${error.message}`);
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
    const missing = required.find((key) => !Object.hasOwn(input, key) || (input as Record<string, unknown>)[key] === undefined);
    if (missing !== undefined) {
      return new ApiError({ kind: 'invalid_field', field: missing, rule: { rule: 'required' } });
    }
  }
  const first = checkerFor(schema).Errors(input).First();
  if (first === undefined) return undefined;
  if (first.type === ValueErrorType.ObjectRequiredProperty) {
    return new ApiError({ kind: 'invalid_field', field: fieldName(first.path), rule: { rule: 'required' } });
  }
  if (first.type === ValueErrorType.ObjectAdditionalProperties) {
    const extra = Object.keys((first.value as object | null) ?? {});
    return new ApiError({ kind: 'unknown_fields', fields: extra.map((k) => `${fieldName(first.path)}.${k}`) });
  }
  return new ApiError({ kind: 'invalid_field', field: fieldName(first.path), rule: ruleOf(first) });
}
