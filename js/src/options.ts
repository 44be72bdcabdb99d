// options.ts — the check every public options object goes through: an option name the package
// does not know (a misspelling such as baseUrl for baseURL, maxToken for maxTokens) is a
// TypeError naming it and listing the known names, never silently ignored; and the checks of the
// options' values: a value of the wrong type is a TypeError naming the option, a number out of
// its range (or not whole) a RangeError, never coerced ('3' retries) or dropped. null is absent,
// as undefined (the defaults apply), as in the server's parameters.
import { RANGES } from './generated.js';

/** The option names of a `what` (a constructor, or per-call options). */
export function checkOptions(what: string, options: unknown, known: readonly string[]): void {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${what}: options must be an object, not ${Array.isArray(options) ? 'an array' : typeof options}`);
  }
  const unknown = Object.keys(options).filter((k) => !known.includes(k));
  if (unknown.length === 0) return;
  const named = unknown.map((k) => {
    const lk = k.toLowerCase();
    const near = known.find((n) => n.toLowerCase() === lk) ?? known.find((n) => close(n.toLowerCase(), lk)) ??
      (lk.length >= 4 ? known.find((n) => n.toLowerCase().startsWith(lk) || lk.startsWith(n.toLowerCase())) : undefined);
    return near ? `'${k}' (did you mean '${near}'?)` : `'${k}'`;
  });
  throw new TypeError(`${what}: unknown option${unknown.length > 1 ? 's' : ''} ${named.join(', ')}; the known options: ${known.join(', ')}`);
}

/** Whether two names are one edit apart (a letter missing, added or changed). */
function close(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return a.slice(i + 1) === b.slice(i + 1) || a.slice(i) === b.slice(i + 1) || a.slice(i + 1) === b.slice(i);
}

/** The options among `names` that are given (not undefined). */
export function given(options: object, names: readonly string[]): string[] {
  return names.filter((n) => (options as Record<string, unknown>)[n] !== undefined);
}

/** A copy of `options` with only `names`. */
export function pick<T extends object>(options: object, names: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const n of names) if (n in options) out[n] = (options as Record<string, unknown>)[n];
  return out as T;
}

/** setTimeout's longest delay: the limit of every option in milliseconds. */
export const MAX_MS = 2_147_483_647;

/** A value as a message shows it: a string quoted, an object or array by its kind. */
export function shown(v: unknown): string {
  if (typeof v === 'string') return `'${v.length > 60 ? `${v.slice(0, 60)}…` : v}'`;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'object') {
    const tag = Object.prototype.toString.call(v).slice(8, -1); // a Headers, a Map, …
    return tag === 'Object' ? 'an object' : `a ${tag}`;
  }
  return String(v);
}

/** Option `name` of `what`, when given, is a whole number in min..max (max: no limit): else a
 * TypeError (not a number) or a RangeError. */
export function checkWhole(what: string, name: string, v: unknown, min: number, max?: number): void {
  if (v === undefined || v === null) return;
  const range = max === undefined ? `of ${min} or more` : `from ${min} to ${max}`;
  const message = `${what}: ${name} must be a whole number ${range}, not ${shown(v)}`;
  if (typeof v !== 'number') throw new TypeError(message);
  if (!Number.isInteger(v) || v < min || (max !== undefined && v > max)) throw new RangeError(message);
}

/** Option `name` of `what`, when given, is what `fits` accepts (`expected` says what): else a
 * TypeError. */
export function checkKind(what: string, name: string, v: unknown, fits: (v: unknown) => boolean, expected: string): void {
  if (v === undefined || v === null) return;
  if (!fits(v)) throw new TypeError(`${what}: ${name} must be ${expected}, not ${shown(v)}`);
}

export const isString = (v: unknown): boolean => typeof v === 'string';

/** Headers as the options take them: a plain object of strings (a Headers instance would be
 * spread into nothing, a number sent as its text). */
export function isHeaderObject(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.values(v).every((h) => typeof h === 'string');
}
export const HEADERS = 'an object of header names to strings';

/** What an adapter's sessionId is, as its messages say. */
export const SESSION_ID = "a non-empty string (a session's UUID or your own name for it)";

/** The values of the options the adapters add to the client's: `sessionId` any non-empty
 * string (an empty one named no session; the server refuses a key it cannot keep: over 256
 * bytes, or with a control character), `maxTokens` a whole number in the context_build operation's
 * declared range, `strategy` and `namespace` strings (the server checks the words, when it gets
 * them). */
export function checkAdapterOptions(what: string, options: { sessionId?: unknown; maxTokens?: unknown; strategy?: unknown; namespace?: unknown }): void {
  checkKind(what, 'sessionId', options.sessionId, (id) => typeof id === 'string' && id !== '', SESSION_ID);
  const { minimum, maximum } = RANGES.context_build.max_tokens;
  checkWhole(what, 'maxTokens', options.maxTokens, minimum, maximum);
  checkKind(what, 'strategy', options.strategy, isString, 'a string');
  checkKind(what, 'namespace', options.namespace, isString, 'a string');
}
