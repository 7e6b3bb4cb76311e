// Answers to a form question (an ACP agent's `elicitation/create`): the action the human took,
// and for accept the typed answers turned into content and checked against the agent's schema.
// Anything that does not fit is INVALID_QUESTION_ANSWER before anything changes, so the question
// stays pending for a correct answer. Pure; interactions.ts does the state change.
import { ServerfsError } from "../../errors.ts";
import {
  FormAnswerInvalid,
  contentFromAnswers,
  validateFormContent,
  type TypedAnswer,
} from "../../runtimes/acp/elicitation-schema.ts";
import type { FormAction, QuestionRequest, QuestionResolution } from "../../runtimes/types.ts";

const ACTIONS: ReadonlySet<string> = new Set<FormAction>(["accept", "decline", "cancel"]);
const ANSWER_KEYS = new Set(["question_id", "selected_option_ids", "text"]);

const bad = (why: string) => new ServerfsError("INVALID_QUESTION_ANSWER", why);

/** The action of a task.question.answer call; decline and cancel exist only for form questions. */
export function answerAction(payload: QuestionRequest, action: string | undefined): FormAction {
  if (action === undefined) return "accept";
  if (!ACTIONS.has(action)) throw bad("action must be accept, decline or cancel");
  if (action !== "accept" && payload.form === undefined) {
    throw bad("only a form question from an ACP agent can be declined or cancelled; answer it, or cancel the task");
  }
  return action as FormAction;
}

function typedAnswers(answers: unknown): TypedAnswer[] {
  if (!Array.isArray(answers)) throw bad("answers must be a list");
  return answers.map((a) => {
    if (typeof a !== "object" || a === null || Array.isArray(a)) throw bad("each answer must be an object");
    const rec = a as Record<string, unknown>;
    for (const k of Object.keys(rec)) if (!ANSWER_KEYS.has(k)) throw bad(`unknown answer key '${k.slice(0, 64)}'`);
    if (typeof rec.question_id !== "string") throw bad("question_id must be a string");
    const sel = rec.selected_option_ids ?? [];
    if (!Array.isArray(sel) || !sel.every((x) => typeof x === "string")) throw bad("selected_option_ids must be a list of strings");
    if (rec.text !== undefined && rec.text !== null && typeof rec.text !== "string") throw bad("text must be a string");
    return { question_id: rec.question_id, selected_option_ids: sel as string[], ...(typeof rec.text === "string" ? { text: rec.text } : {}) };
  });
}

/** The resolution of a form question; throws INVALID_QUESTION_ANSWER naming the property at fault. */
export function resolveForm(payload: QuestionRequest, action: FormAction, answers: unknown): QuestionResolution {
  const form = payload.form!;
  if (action !== "accept") {
    if (Array.isArray(answers) && answers.length > 0) throw bad(`a ${action} carries no answers`);
    return { answers: [], action };
  }
  const typed = typedAnswers(answers);
  try {
    const content = validateFormContent(form.schema, contentFromAnswers(form.schema, typed));
    return { answers: typed, action, content };
  } catch (err) {
    if (err instanceof FormAnswerInvalid) throw bad(`the answer does not fit the agent's form: ${err.message}`);
    throw err;
  }
}
