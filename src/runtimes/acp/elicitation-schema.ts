// The bounded validator for ACP's stable form elicitation schema (the `requestedSchema` of an
// `elicitation/create` in form mode) and for the answers a human gives to one. It accepts what
// the pinned SDK's generated schema accepts (test/runtimes/acp/elicitation-schema.property.test.ts
// checks that against random schemas), restricted to what serverfs can show and check exactly:
// a flat object of string, number, integer, boolean, single-select and multi-select properties.
// Anything else is declined with a stable reason (docs/agent-bridge.md, "Questions from ACP
// agents"), never forwarded half-understood. Pure functions, no I/O.

export type StringFormat = "email" | "uri" | "date" | "date-time";
const FORMATS: ReadonlySet<string> = new Set<StringFormat>(["email", "uri", "date", "date-time"]);

export interface FormChoice {
  const: string;
  title: string;
  description?: string;
}

interface Described {
  title?: string;
  description?: string;
}

export type FormProperty =
  | (Described & { type: "string"; minLength?: number; maxLength?: number; format?: StringFormat; default?: string })
  | (Described & { type: "string"; choices: FormChoice[]; titled: boolean; default?: string })
  | (Described & { type: "number" | "integer"; minimum?: number; maximum?: number; default?: number })
  | (Described & { type: "boolean"; default?: boolean })
  | (Described & { type: "array"; choices: FormChoice[]; titled: boolean; minItems?: number; maxItems?: number; default?: string[] });

/** The normalised form: what the Bridge stores, shows and validates answers against. */
export interface FormSchema {
  title?: string;
  description?: string;
  /** In the agent's order. */
  properties: Array<{ name: string; schema: FormProperty }>;
  required: string[];
}

/** Bounds on what an agent may ask in one form. */
export const FORM_BOUNDS = {
  properties: 32,
  nameChars: 64,
  titleChars: 256,
  descriptionChars: 2048,
  messageChars: 4096,
  choices: 64,
  choiceChars: 256,
  /** A string answer (or default) longer than this is refused whatever the schema's maxLength. */
  answerChars: 16_384,
} as const;

/** Why a schema was declined: a stable reason, and a detail naming the agent's own key. */
export type DeclineReason =
  | "not_an_object"
  | "too_many_properties"
  | "bad_property_name"
  | "unsupported_type"
  | "unsupported_keyword"
  | "nested_schema"
  | "text_too_long"
  | "too_many_choices"
  | "bad_choices"
  | "bad_constraint"
  | "bad_required";

export class FormSchemaDeclined extends Error {
  constructor(
    readonly reason: DeclineReason,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const present = (v: unknown): boolean => v !== undefined && v !== null;
const chars = (s: string): number => [...s].length;
const clipName = (s: string): string => (s.length > 64 ? `${s.slice(0, 64)}…` : s);

function decline(reason: DeclineReason, detail: string): never {
  throw new FormSchemaDeclined(reason, detail);
}

/**
 * Lenient fields, as the SDK treats them: a malformed title, description or default is dropped
 * (its `defaultOnError`), never a reason to refuse. A well-formed one must fit the bounds.
 */
function lenientText(raw: unknown, max: number, where: string, what: string): string | undefined {
  if (typeof raw !== "string") return undefined;
  if (chars(raw) > max) decline("text_too_long", `${where}: ${what} is longer than ${max} characters`);
  return raw;
}

function described(raw: Json, where: string): Described {
  const out: Described = {};
  const title = lenientText(raw.title, FORM_BOUNDS.titleChars, where, "title");
  const description = lenientText(raw.description, FORM_BOUNDS.descriptionChars, where, "description");
  if (title !== undefined) out.title = title;
  if (description !== undefined) out.description = description;
  return out;
}

function onlyKeys(raw: Json, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key)) {
      if (key === "properties" || key === "items" || key === "anyOf" || key === "allOf" || key === "$ref") {
        decline("nested_schema", `${where}: '${clipName(key)}' would nest a schema`);
      }
      decline("unsupported_keyword", `${where}: '${clipName(key)}' is not part of the form schema serverfs supports`);
    }
  }
}

const COMMON = ["type", "title", "description", "default", "_meta"] as const;

/** A JSON-Schema non-negative uint32 (the SDK's minLength/maxLength), absent when null. */
function uint32(raw: unknown, where: string, key: string): number | undefined {
  if (!present(raw)) return undefined;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 0 || raw > 4294967295) decline("bad_constraint", `${where}: ${key} must be a whole number ≥ 0`);
  return raw;
}

function finite(raw: unknown, where: string, key: string, integer: boolean): number | undefined {
  if (!present(raw)) return undefined;
  if (typeof raw !== "number" || !Number.isFinite(raw) || (integer && !Number.isInteger(raw))) {
    decline("bad_constraint", `${where}: ${key} must be ${integer ? "a whole number" : "a number"}`);
  }
  return raw;
}

function nonNegativeInt(raw: unknown, where: string, key: string): number | undefined {
  const n = finite(raw, where, key, true);
  if (n !== undefined && n < 0) decline("bad_constraint", `${where}: ${key} must be ≥ 0`);
  return n;
}

function ordered(min: number | undefined, max: number | undefined, where: string, what: string): void {
  if (min !== undefined && max !== undefined && min > max) decline("bad_constraint", `${where}: ${what} minimum is above its maximum`);
}

function titledChoices(raw: unknown, where: string, key: string): FormChoice[] {
  if (!Array.isArray(raw)) decline("bad_choices", `${where}: ${key} must be a list`);
  if (raw.length === 0) decline("bad_choices", `${where}: ${key} offers no choice`);
  if (raw.length > FORM_BOUNDS.choices) decline("too_many_choices", `${where}: ${key} offers more than ${FORM_BOUNDS.choices} choices`);
  return raw.map((item, i) => {
    const at = `${where}.${key}[${i}]`;
    if (!isObject(item)) decline("bad_choices", `${at} must be an object with const and title`);
    onlyKeys(item, ["const", "title", "description", "_meta"], at);
    if (typeof item.const !== "string" || typeof item.title !== "string") decline("bad_choices", `${at} needs a string const and a string title`);
    if (chars(item.const) > FORM_BOUNDS.choiceChars || chars(item.title) > FORM_BOUNDS.choiceChars) {
      decline("text_too_long", `${at}: const or title is longer than ${FORM_BOUNDS.choiceChars} characters`);
    }
    const out: FormChoice = { const: item.const, title: item.title };
    const description = lenientText(item.description, FORM_BOUNDS.descriptionChars, at, "description");
    if (description !== undefined) out.description = description;
    return out;
  });
}

function plainChoices(raw: unknown, where: string, key: string): FormChoice[] {
  if (!Array.isArray(raw)) decline("bad_choices", `${where}: ${key} must be a list`);
  if (raw.length === 0) decline("bad_choices", `${where}: ${key} offers no choice`);
  if (raw.length > FORM_BOUNDS.choices) decline("too_many_choices", `${where}: ${key} offers more than ${FORM_BOUNDS.choices} choices`);
  return raw.map((v, i) => {
    if (typeof v !== "string") decline("bad_choices", `${where}.${key}[${i}] must be a string`);
    if (chars(v) > FORM_BOUNDS.choiceChars) decline("text_too_long", `${where}.${key}[${i}] is longer than ${FORM_BOUNDS.choiceChars} characters`);
    return { const: v, title: v };
  });
}

function distinct(choices: FormChoice[], where: string): FormChoice[] {
  if (new Set(choices.map((c) => c.const)).size !== choices.length) decline("bad_choices", `${where}: the same value is offered twice`);
  return choices;
}

function stringProperty(raw: Json, where: string): FormProperty {
  onlyKeys(raw, [...COMMON, "minLength", "maxLength", "format", "enum", "oneOf", "pattern"], where);
  // A pattern is an ECMAScript regex serverfs would have to run on a human's answer: not supported.
  if (present(raw.pattern)) decline("unsupported_keyword", `${where}: 'pattern' is not supported`);
  const base = described(raw, where);
  const def = typeof raw.default === "string" && chars(raw.default) <= FORM_BOUNDS.answerChars ? raw.default : undefined;
  if (present(raw.enum) || present(raw.oneOf)) {
    if (present(raw.enum) && present(raw.oneOf)) decline("bad_choices", `${where}: give enum or oneOf, not both`);
    for (const k of ["minLength", "maxLength", "format"] as const) {
      if (present(raw[k])) decline("unsupported_keyword", `${where}: '${k}' does not apply to a single-select`);
    }
    const titled = present(raw.oneOf);
    const choices = distinct(titled ? titledChoices(raw.oneOf, where, "oneOf") : plainChoices(raw.enum, where, "enum"), where);
    return { type: "string", ...base, choices, titled, ...(def !== undefined ? { default: def } : {}) };
  }
  const minLength = uint32(raw.minLength, where, "minLength");
  const maxLength = uint32(raw.maxLength, where, "maxLength");
  ordered(minLength, maxLength, where, "length");
  let format: StringFormat | undefined;
  if (present(raw.format)) {
    if (typeof raw.format !== "string" || !FORMATS.has(raw.format)) decline("bad_constraint", `${where}: format must be email, uri, date or date-time`);
    format = raw.format as StringFormat;
  }
  return {
    type: "string",
    ...base,
    ...(minLength !== undefined ? { minLength } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
    ...(format !== undefined ? { format } : {}),
    ...(def !== undefined ? { default: def } : {}),
  };
}

function numberProperty(raw: Json, where: string, type: "number" | "integer"): FormProperty {
  onlyKeys(raw, [...COMMON, "minimum", "maximum"], where);
  const integer = type === "integer";
  const minimum = finite(raw.minimum, where, "minimum", integer);
  const maximum = finite(raw.maximum, where, "maximum", integer);
  ordered(minimum, maximum, where, "value");
  const d = raw.default;
  const def = typeof d === "number" && Number.isFinite(d) && (!integer || Number.isInteger(d)) ? d : undefined;
  return {
    type,
    ...described(raw, where),
    ...(minimum !== undefined ? { minimum } : {}),
    ...(maximum !== undefined ? { maximum } : {}),
    ...(def !== undefined ? { default: def } : {}),
  };
}

function arrayProperty(raw: Json, where: string): FormProperty {
  onlyKeys(raw, [...COMMON, "minItems", "maxItems", "items"], where);
  const items = raw.items;
  if (!isObject(items)) decline("unsupported_type", `${where}: a multi-select needs items with enum or anyOf`);
  const at = `${where}.items`;
  let choices: FormChoice[];
  let titled: boolean;
  if (items.type === "string" && !present(items.anyOf)) {
    onlyKeys(items, ["type", "enum", "_meta"], at);
    choices = plainChoices(items.enum, at, "enum");
    titled = false;
  } else if (!present(items.type) && present(items.anyOf)) {
    onlyKeys(items, ["anyOf", "_meta"], at);
    choices = titledChoices(items.anyOf, at, "anyOf");
    titled = true;
  } else {
    decline("unsupported_type", `${at}: only {type: "string", enum} or {anyOf: [{const, title}]} items are supported`);
  }
  distinct(choices, at);
  const minItems = nonNegativeInt(raw.minItems, where, "minItems");
  const maxItems = nonNegativeInt(raw.maxItems, where, "maxItems");
  ordered(minItems, maxItems, where, "item count");
  // The SDK keeps the string entries of a default list and skips the rest.
  const def = Array.isArray(raw.default) ? raw.default.filter((v): v is string => typeof v === "string") : undefined;
  return {
    type: "array",
    ...described(raw, where),
    choices,
    titled,
    ...(minItems !== undefined ? { minItems } : {}),
    ...(maxItems !== undefined ? { maxItems } : {}),
    ...(def !== undefined ? { default: def } : {}),
  };
}

function property(name: string, raw: unknown): FormProperty {
  const where = `property '${clipName(name)}'`;
  if (!isObject(raw)) decline("unsupported_type", `${where} is not a schema object`);
  switch (raw.type) {
    case "string":
      return stringProperty(raw, where);
    case "number":
    case "integer":
      return numberProperty(raw, where, raw.type);
    case "boolean":
      onlyKeys(raw, COMMON, where);
      return { type: "boolean", ...described(raw, where), ...(typeof raw.default === "boolean" ? { default: raw.default } : {}) };
    case "array":
      return arrayProperty(raw, where);
    case "object":
      return decline("nested_schema", `${where} is an object: forms are flat`);
    default:
      return decline("unsupported_type", `${where} has type ${typeof raw.type === "string" ? `'${clipName(raw.type)}'` : "missing"}`);
  }
}

const PROPERTY_NAME = /^[A-Za-z0-9_.-]+$/;

/** Check and normalise an agent's requestedSchema; throws FormSchemaDeclined when it is outside the subset. */
export function parseFormSchema(raw: unknown): FormSchema {
  if (!isObject(raw)) decline("not_an_object", "requestedSchema must be an object");
  if (present(raw.type) && raw.type !== "object") decline("not_an_object", "requestedSchema must have type 'object'");
  // `$schema` and `additionalProperties: false` are what JSON-Schema generators add to a flat form.
  onlyKeys(raw, ["type", "title", "description", "properties", "required", "_meta", "$schema", "additionalProperties"], "requestedSchema");
  if (present(raw.additionalProperties) && raw.additionalProperties !== false) {
    decline("unsupported_keyword", "requestedSchema: additionalProperties may only be false");
  }
  const props = raw.properties ?? {};
  if (!isObject(props)) decline("not_an_object", "requestedSchema.properties must be an object");
  const names = Object.keys(props);
  if (names.length > FORM_BOUNDS.properties) decline("too_many_properties", `the form has ${names.length} properties; at most ${FORM_BOUNDS.properties} are supported`);
  const properties = names.map((name) => {
    if (name.length === 0 || name.length > FORM_BOUNDS.nameChars || !PROPERTY_NAME.test(name)) {
      decline("bad_property_name", `property '${clipName(name)}' must be 1 to ${FORM_BOUNDS.nameChars} of A-Z a-z 0-9 _ . -`);
    }
    return { name, schema: property(name, props[name]) };
  });
  let required: string[] = [];
  if (present(raw.required)) {
    if (!Array.isArray(raw.required) || !raw.required.every((r): r is string => typeof r === "string")) {
      decline("bad_required", "required must be a list of property names");
    }
    for (const r of raw.required) if (!Object.hasOwn(props, r)) decline("bad_required", `required names '${clipName(r)}', which is not a property`);
    required = [...new Set(raw.required)];
  }
  const out: FormSchema = { ...described(raw, "requestedSchema"), properties, required };
  return out;
}

/** The normalised form back as a JSON Schema (what an MCP client is shown). */
export function toJsonSchema(form: FormSchema, rename: (name: string, index: number) => string = (n) => n): Json {
  const properties: Json = {};
  form.properties.forEach(({ name, schema }, i) => {
    const { title, description } = schema;
    const base: Json = { ...(title !== undefined ? { title } : {}), ...(description !== undefined ? { description } : {}) };
    let out: Json;
    if (schema.type === "array") {
      out = {
        type: "array",
        ...base,
        items: schema.titled ? { anyOf: schema.choices } : { type: "string", enum: schema.choices.map((c) => c.const) },
        ...(schema.minItems !== undefined ? { minItems: schema.minItems } : {}),
        ...(schema.maxItems !== undefined ? { maxItems: schema.maxItems } : {}),
      };
    } else if (schema.type === "string" && "choices" in schema) {
      out = { type: "string", ...base, ...(schema.titled ? { oneOf: schema.choices } : { enum: schema.choices.map((c) => c.const) }) };
    } else {
      const { title: _t, description: _d, default: _def, ...rest } = schema as FormProperty & { default?: unknown };
      out = { ...rest, ...base };
    }
    if (schema.default !== undefined) out.default = schema.default;
    properties[rename(name, i)] = out;
  });
  const names = new Map(form.properties.map(({ name }, i) => [name, rename(name, i)]));
  return {
    type: "object",
    ...(form.title !== undefined ? { title: form.title } : {}),
    ...(form.description !== undefined ? { description: form.description } : {}),
    properties,
    required: form.required.map((r) => names.get(r)!),
  };
}

/** A value an accepted form may carry (the SDK's ElicitationContentValue). */
export type FormValue = string | number | boolean | string[];

/** Why an answer does not fit the form: the property it is about and what is wrong. */
export class FormAnswerInvalid extends Error {}

function invalid(name: string, why: string): never {
  throw new FormAnswerInvalid(`'${clipName(name)}' ${why}`);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)*$/;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/;

function validDate(y: string, m: string, d: string): boolean {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days;
}

/** Whether `value` is a string of `format` (RFC 3339 date / date-time, an absolute URI, an address). */
export function matchesFormat(value: string, format: StringFormat): boolean {
  switch (format) {
    case "email":
      return EMAIL.test(value);
    case "uri":
      return URI.test(value);
    case "date": {
      const m = DATE.exec(value);
      return m !== null && validDate(m[1]!, m[2]!, m[3]!);
    }
    case "date-time": {
      const m = DATE_TIME.exec(value);
      if (m === null || !validDate(m[1]!, m[2]!, m[3]!)) return false;
      const [h, min, s] = [Number(m[4]), Number(m[5]), Number(m[6])];
      if (h > 23 || min > 59 || s > 60) return false;
      return m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
    }
  }
}

function checkValue(name: string, schema: FormProperty, value: unknown): FormValue {
  switch (schema.type) {
    case "string": {
      if (typeof value !== "string") invalid(name, "must be text");
      if (chars(value) > FORM_BOUNDS.answerChars) invalid(name, `is longer than ${FORM_BOUNDS.answerChars} characters`);
      if ("choices" in schema) {
        if (!schema.choices.some((c) => c.const === value)) invalid(name, "is not one of the offered choices");
        return value;
      }
      const n = chars(value);
      if (schema.minLength !== undefined && n < schema.minLength) invalid(name, `must be at least ${schema.minLength} characters`);
      if (schema.maxLength !== undefined && n > schema.maxLength) invalid(name, `must be at most ${schema.maxLength} characters`);
      if (schema.format !== undefined && !matchesFormat(value, schema.format)) invalid(name, `is not a valid ${schema.format}`);
      return value;
    }
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) invalid(name, "must be a number");
      if (schema.type === "integer" && !Number.isInteger(value)) invalid(name, "must be a whole number");
      if (schema.minimum !== undefined && value < schema.minimum) invalid(name, `must be at least ${schema.minimum}`);
      if (schema.maximum !== undefined && value > schema.maximum) invalid(name, `must be at most ${schema.maximum}`);
      return value;
    }
    case "boolean":
      if (typeof value !== "boolean") invalid(name, "must be true or false");
      return value;
    case "array": {
      if (!Array.isArray(value) || !value.every((v): v is string => typeof v === "string")) invalid(name, "must be a list of choices");
      if (new Set(value).size !== value.length) invalid(name, "names the same choice twice");
      for (const v of value) if (!schema.choices.some((c) => c.const === v)) invalid(name, "names a choice that was not offered");
      if (schema.minItems !== undefined && value.length < schema.minItems) invalid(name, `needs at least ${schema.minItems} choices`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems) invalid(name, `takes at most ${schema.maxItems} choices`);
      return [...value];
    }
  }
}

/** The accepted content, checked against the form: every key a property, every required one given. */
export function validateFormContent(form: FormSchema, content: unknown): Record<string, FormValue> {
  if (!isObject(content)) throw new FormAnswerInvalid("the answer must be an object of property values");
  const byName = new Map(form.properties.map((p) => [p.name, p.schema]));
  const out: Record<string, FormValue> = {};
  for (const [name, value] of Object.entries(content)) {
    const schema = byName.get(name);
    if (!schema) invalid(name, "is not a property of this form");
    out[name] = checkValue(name, schema, value);
  }
  for (const r of form.required) if (!Object.hasOwn(out, r)) invalid(r, "is required");
  return out;
}

/** One answer as the operator or assistant types it: option ids and/or text for a property. */
export interface TypedAnswer {
  question_id: string;
  selected_option_ids: string[];
  text?: string;
}

const NUMBER_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** Typed answers (`serverfs tasks answer`, answer_agent_question) → form content, by each property's type. */
export function contentFromAnswers(form: FormSchema, answers: readonly TypedAnswer[]): Record<string, unknown> {
  const byName = new Map(form.properties.map((p) => [p.name, p.schema]));
  const content: Record<string, unknown> = {};
  for (const a of answers) {
    const schema = byName.get(a.question_id);
    if (!schema) invalid(a.question_id, "is not a property of this form");
    if (Object.hasOwn(content, a.question_id)) invalid(a.question_id, "is answered twice");
    const text = a.text;
    const picked = a.selected_option_ids;
    if (schema.type === "array") {
      if (text !== undefined) invalid(a.question_id, "takes choices, not text");
      content[a.question_id] = picked;
    } else if (schema.type === "string" && "choices" in schema) {
      if (text !== undefined || picked.length !== 1) invalid(a.question_id, "takes exactly one choice");
      content[a.question_id] = picked[0];
    } else if (schema.type === "boolean") {
      const v = picked.length === 1 && text === undefined ? picked[0] : picked.length === 0 ? text : undefined;
      if (v !== "true" && v !== "false") invalid(a.question_id, "takes true or false");
      content[a.question_id] = v === "true";
    } else {
      if (picked.length > 0 || text === undefined) invalid(a.question_id, "takes text");
      if (schema.type === "string") content[a.question_id] = text;
      else if (!NUMBER_TEXT.test(text.trim())) invalid(a.question_id, "must be a number");
      else content[a.question_id] = Number(text.trim());
    }
  }
  return content;
}

/** A one-line description of a property's type and constraints, for people choosing an answer. */
export function describeProperty(schema: FormProperty, required: boolean): string {
  const parts: string[] = [];
  if (schema.type === "string" && "choices" in schema) parts.push("one choice");
  else if (schema.type === "array") {
    parts.push("several choices");
    if (schema.minItems !== undefined) parts.push(`at least ${schema.minItems}`);
    if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems}`);
  } else if (schema.type === "string") {
    parts.push(schema.format ?? "text");
    if (schema.minLength !== undefined) parts.push(`min ${schema.minLength} characters`);
    if (schema.maxLength !== undefined) parts.push(`max ${schema.maxLength} characters`);
  } else if (schema.type === "boolean") parts.push("true or false");
  else {
    parts.push(schema.type === "integer" ? "whole number" : "number");
    if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
    if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  }
  parts.push(required ? "required" : "optional");
  return parts.join(", ");
}
