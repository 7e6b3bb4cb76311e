// Provider error text is private: it may quote host paths, prompts or credentials, so it goes to
// the bounded operator diagnostics only, never into a caller-visible error (docs/runtimes.md).
/**
 * A short, single-line, bounded rendering of a provider's error. A JSON-RPC error (the ACP SDK's
 * RequestError, or any Error carrying a numeric `code`) is shown as "<code> <message>".
 */
export function privateErrorText(err: unknown, limit = 512): string {
  let text: string;
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  if (err instanceof Error && typeof code === "number") text = `${code} ${err.message}`;
  else if (err instanceof Error) text = `${err.name}: ${err.message}`;
  else text = String(err);
  text = text.replace(/[\u0000-\u001f\u007f]+/g, " ");
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
