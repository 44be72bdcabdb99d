// options.ts — the check every public options object goes through: an option name the package
// does not know (a misspelling such as baseUrl for baseURL, maxToken for maxTokens) is a
// TypeError naming it and listing the known names, never silently ignored.

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
