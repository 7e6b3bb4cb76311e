// The form-schema validator against the pinned ACP SDK's own generated zod schema, on random
// schemas and random answers. For every generated schema: serverfs accepts it exactly when the
// SDK's `zElicitationSchema` accepts it AND it is inside serverfs's documented subset and bounds
// (an independent, simple predicate below); when both accept, serverfs's normalised schema is the
// SDK's parse result. For every random answer to an accepted schema, serverfs accepts it exactly
// when the SDK's response schema accepts the content AND the value fits the property's
// constraints. Seeded (SERVERFS_PROPERTY_SEED replays a failure); the seed is printed.
import { expect, test } from "bun:test";
import {
  zCreateElicitationResponse,
  zElicitationSchema,
} from "../../../node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js";
import {
  FORM_BOUNDS,
  FormAnswerInvalid,
  FormSchemaDeclined,
  matchesFormat,
  parseFormSchema,
  toJsonSchema,
  validateFormContent,
  type FormSchema,
} from "../../../src/runtimes/acp/elicitation-schema.ts";
import { mulberry32 } from "../../support/prng.ts";

// A fixed seed, so every run checks the same cases and a test run never depends on luck; another
// seed (SERVERFS_PROPERTY_SEED) explores further, or replays a failure found that way.
const SEED = Number(process.env.SERVERFS_PROPERTY_SEED ?? 0x5eed_e1c1);
console.log(`elicitation-schema property seed: ${SEED} (replay with SERVERFS_PROPERTY_SEED=${SEED})`);
const rnd = mulberry32(SEED);
const int = (n: number) => Math.floor(rnd() * n);
const chance = (p: number) => rnd() < p;
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;

type J = Record<string, unknown>;

function text(max: number): string {
  // Mostly short; sometimes right at or just past a bound.
  const len = chance(0.05) ? max + int(3) - 1 : int(12);
  return Array.from({ length: Math.max(0, len) }, () => pick(["a", "b", "é", "😀", " ", "-"])).join("");
}

function maybeMalformed(good: () => unknown): unknown {
  return chance(0.1) ? pick([5, true, null, [], {}, "x"]) : good();
}

function choiceList(titled: boolean): unknown[] {
  const n = chance(0.05) ? FORM_BOUNDS.choices + 1 : chance(0.05) ? 0 : 1 + int(5);
  const values = Array.from({ length: n }, () => (chance(0.1) ? "dup" : `v${int(1000)}`));
  if (!titled) return values.map((v) => (chance(0.03) ? 7 : v));
  return values.map((v) => {
    const o: J = { const: v, title: chance(0.03) ? 9 : text(FORM_BOUNDS.choiceChars) };
    if (chance(0.3)) o.description = maybeMalformed(() => text(40));
    return o;
  });
}

function common(o: J, def: () => unknown): J {
  if (chance(0.5)) o.title = maybeMalformed(() => text(FORM_BOUNDS.titleChars));
  if (chance(0.3)) o.description = maybeMalformed(() => text(FORM_BOUNDS.descriptionChars));
  if (chance(0.3)) o.default = maybeMalformed(def);
  return o;
}

function bound(integer: boolean): unknown {
  return pick<unknown>([int(20), int(20) - 10, integer ? int(5) : rnd() * 10, null, "3", -1, 1.5]);
}

function property(): J {
  switch (int(9)) {
    case 0: {
      const o: J = { type: "string" };
      if (chance(0.3)) o.minLength = bound(true);
      if (chance(0.3)) o.maxLength = bound(true);
      if (chance(0.3)) o.format = pick(["email", "uri", "date", "date-time", "phone", null]);
      if (chance(0.03)) o.pattern = "^a+$";
      return common(o, () => text(20));
    }
    case 1:
      return common({ type: "string", enum: choiceList(false) }, () => `v${int(1000)}`);
    case 2:
      return common({ type: "string", oneOf: choiceList(true) }, () => `v${int(1000)}`);
    case 3: {
      const integer = chance(0.5);
      const o: J = { type: integer ? "integer" : "number" };
      if (chance(0.4)) o.minimum = bound(integer);
      if (chance(0.4)) o.maximum = bound(integer);
      return common(o, () => (integer ? int(20) : rnd() * 20));
    }
    case 4:
      return common({ type: "boolean" }, () => chance(0.5));
    case 5:
    case 6: {
      const titled = chance(0.5);
      const o: J = { type: "array", items: titled ? { anyOf: choiceList(true) } : { type: "string", enum: choiceList(false) } };
      if (chance(0.3)) o.minItems = bound(true);
      if (chance(0.3)) o.maxItems = bound(true);
      return common(o, () => [`v${int(1000)}`]);
    }
    case 7:
      return { type: pick(["object", "date", "null"]), ...(chance(0.5) ? { properties: {} } : {}) };
    default:
      return pick<J>([{ type: "string", enum: ["a"], oneOf: [{ const: "a", title: "A" }] }, { title: "no type" }, { type: "array", items: { type: "number" } }]);
  }
}

function schema(): J {
  const n = chance(0.05) ? FORM_BOUNDS.properties + 1 : int(6);
  const properties: J = {};
  for (let i = 0; i < n; i++) properties[chance(0.03) ? "bad name!" : `p${i}`] = property();
  const out: J = { type: chance(0.03) ? "array" : "object", properties };
  if (chance(0.5)) out.required = Object.keys(properties).filter(() => chance(0.5)).concat(chance(0.05) ? ["ghost"] : []);
  if (chance(0.2)) out.title = maybeMalformed(() => text(FORM_BOUNDS.titleChars));
  return out;
}

const isNum = (v: unknown): v is number => typeof v === "number";
const len = (s: string) => [...s].length;

/** serverfs's subset and bounds, stated independently of the validator (docs/agent-bridge.md). */
function insideSubset(s: J): boolean {
  if (s.type !== "object") return false;
  const props = s.properties as Record<string, J>;
  const names = Object.keys(props);
  if (names.length > FORM_BOUNDS.properties) return false;
  if (names.some((n) => !/^[A-Za-z0-9_.-]{1,64}$/.test(n))) return false;
  if (typeof s.title === "string" && len(s.title) > FORM_BOUNDS.titleChars) return false;
  if (Array.isArray(s.required) && s.required.some((r) => !names.includes(r as string))) return false;
  for (const p of Object.values(props)) {
    if (!["string", "number", "integer", "boolean", "array"].includes(p.type as string)) return false;
    if (typeof p.title === "string" && len(p.title) > FORM_BOUNDS.titleChars) return false;
    if (typeof p.description === "string" && len(p.description) > FORM_BOUNDS.descriptionChars) return false;
    if (p.pattern !== undefined) return false;
    const choices = (p.enum ?? p.oneOf ?? (p.items as J | undefined)?.enum ?? (p.items as J | undefined)?.anyOf) as unknown[] | undefined;
    if (p.type === "string" && p.enum !== undefined && p.oneOf !== undefined) return false;
    if (p.type === "array" && (p.items as J).type !== undefined && (p.items as J).type !== "string") return false;
    if (choices !== undefined) {
      if (choices.length === 0 || choices.length > FORM_BOUNDS.choices) return false;
      const consts = choices.map((c) => (typeof c === "string" ? c : (c as J).const as string));
      if (new Set(consts).size !== consts.length) return false;
      for (const c of choices) {
        const t = typeof c === "string" ? [c] : [(c as J).const as string, (c as J).title as string];
        if (t.some((x) => len(x) > FORM_BOUNDS.choiceChars)) return false;
        if (typeof c === "object" && typeof (c as J).description === "string" && len((c as J).description as string) > FORM_BOUNDS.descriptionChars) return false;
      }
    }
    const [lo, hi] = p.type === "string" ? [p.minLength, p.maxLength] : p.type === "array" ? [p.minItems, p.maxItems] : [p.minimum, p.maximum];
    if (isNum(lo) && isNum(hi) && lo > hi) return false;
  }
  return true;
}

/** The SDK's parse result with what serverfs deliberately leaves out (absent-as-null, empty required). */
function comparable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(comparable);
  if (v && typeof v === "object") {
    const out: J = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined && k !== "_meta") out[k] = comparable(x);
    return out;
  }
  return v;
}

test("schemas: accepted exactly when the SDK accepts and it is inside the subset; normalised as the SDK parses", () => {
  let accepted = 0;
  let declined = 0;
  for (let i = 0; i < 3000; i++) {
    const s = schema();
    const sdk = zElicitationSchema.safeParse(s);
    let ours: FormSchema | null = null;
    let reason: string | null = null;
    try {
      ours = parseFormSchema(s);
    } catch (err) {
      if (!(err instanceof FormSchemaDeclined)) throw err;
      reason = err.reason;
    }
    const expected = sdk.success && insideSubset(s);
    if ((ours !== null) !== expected) {
      throw new Error(`seed ${SEED} case ${i}: serverfs ${ours ? "accepted" : `declined (${reason})`}, SDK ${sdk.success ? "accepted" : "refused"}: ${JSON.stringify(s)}`);
    }
    if (ours !== null) {
      accepted++;
      const sdkOut = comparable(sdk.data) as J;
      if (Array.isArray(sdkOut.required)) sdkOut.required = [...new Set(sdkOut.required as string[])];
      else sdkOut.required = [];
      expect(comparable(toJsonSchema(ours))).toEqual(sdkOut);
    } else declined++;
  }
  // The generator reaches both sides often enough to mean something.
  expect(accepted).toBeGreaterThan(300);
  expect(declined).toBeGreaterThan(300);
});

function randomValue(): unknown {
  return pick<unknown>([
    text(10),
    `v${int(1000)}`,
    "a@b.example",
    "https://x.example/p",
    "2024-02-29",
    "2023-02-29",
    "2024-01-02T03:04:05Z",
    int(30) - 10,
    rnd() * 20,
    chance(0.5),
    [`v${int(1000)}`],
    [],
    null,
    { nested: 1 },
  ]);
}

/** The constraint a value must meet, stated from the property's own JSON schema. */
function fits(p: J, v: unknown): boolean {
  const lo = (k: string) => (isNum(p[k]) ? (p[k] as number) : -Infinity);
  const hi = (k: string) => (isNum(p[k]) ? (p[k] as number) : Infinity);
  switch (p.type) {
    case "string": {
      if (typeof v !== "string" || len(v) > FORM_BOUNDS.answerChars) return false;
      const choices = (p.enum as string[] | undefined) ?? (p.oneOf as J[] | undefined)?.map((c) => c.const as string);
      if (choices) return choices.includes(v);
      return len(v) >= lo("minLength") && len(v) <= hi("maxLength") && (typeof p.format !== "string" || matchesFormat(v, p.format as never));
    }
    case "number":
      return isNum(v) && v >= lo("minimum") && v <= hi("maximum");
    case "integer":
      return isNum(v) && Number.isInteger(v) && v >= lo("minimum") && v <= hi("maximum");
    case "boolean":
      return typeof v === "boolean";
    default: {
      const items = p.items as J;
      const choices = (items.enum as string[] | undefined) ?? (items.anyOf as J[]).map((c) => c.const as string);
      return Array.isArray(v) && v.every((x) => typeof x === "string" && choices.includes(x)) && new Set(v).size === v.length && v.length >= lo("minItems") && v.length <= hi("maxItems");
    }
  }
}

test("answers: accepted exactly when the SDK's response schema takes the content and every value fits", () => {
  let tried = 0;
  let acceptedAnswers = 0;
  while (tried < 3000) {
    let form: FormSchema;
    try {
      form = parseFormSchema(schema());
    } catch {
      continue;
    }
    if (form.properties.length === 0) continue;
    const json = toJsonSchema(form) as { properties: Record<string, J>; required: string[] };
    for (let k = 0; k < 5; k++) {
      tried++;
      const content: J = {};
      for (const { name, schema: prop } of form.properties) {
        if (chance(0.15)) continue;
        // Half the time, a value built to fit (a choice of this property); otherwise anything.
        const p = json.properties[name]!;
        const choices = (p.enum ?? p.oneOf ?? (p.items as J | undefined)?.enum ?? (p.items as J | undefined)?.anyOf) as unknown[] | undefined;
        const c = choices?.map((x) => (typeof x === "string" ? x : ((x as J).const as string)));
        content[name] = c && chance(0.6) ? (prop.type === "array" ? c.slice(0, int(c.length + 1)) : pick(c)) : randomValue();
      }
      if (chance(0.05)) content.ghost = "x";
      const sdkOk = zCreateElicitationResponse.safeParse({ action: "accept", content }).success;
      const expected =
        sdkOk &&
        !("ghost" in content) &&
        json.required.every((r) => r in content) &&
        Object.entries(content).every(([name, v]) => fits(json.properties[name]!, v));
      let ok = true;
      try {
        validateFormContent(form, content);
      } catch (err) {
        if (!(err instanceof FormAnswerInvalid)) throw err;
        ok = false;
      }
      if (ok !== expected) throw new Error(`seed ${SEED}: serverfs ${ok ? "accepted" : "refused"} ${JSON.stringify(content)} for ${JSON.stringify(json)}`);
      if (ok) acceptedAnswers++;
    }
  }
  expect(acceptedAnswers).toBeGreaterThan(100);
});

test("formats, on fixed cases", () => {
  const cases: Array<[string, "email" | "uri" | "date" | "date-time", boolean]> = [
    ["a@b.example", "email", true],
    ["a@b", "email", true],
    ["a b@c.example", "email", false],
    ["@c.example", "email", false],
    ["https://example.com/x?y", "uri", true],
    ["urn:isbn:123", "uri", true],
    ["/relative/path", "uri", false],
    ["2024-02-29", "date", true],
    ["2023-02-29", "date", false],
    ["2024-13-01", "date", false],
    ["2024-01-02T03:04:05Z", "date-time", true],
    ["2024-01-02T03:04:05.123+05:30", "date-time", true],
    ["2024-01-02 03:04:05Z", "date-time", false],
    ["2024-01-02T25:04:05Z", "date-time", false],
  ];
  for (const [value, format, want] of cases) expect([value, format, matchesFormat(value, format)]).toEqual([value, format, want]);
});
