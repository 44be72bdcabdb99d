// client.ts — MnemoClient: the transport under the generated methods (src/generated.ts). Builds
// the URL from the operation's path, sends GET/DELETE parameters in the query string and the
// others as a JSON body, adds the API key, turns error answers into typed exceptions
// (errors.ts) and retries 429 and 503 (nothing was done) after the server's Retry-After. An
// option name it does not know (constructor or per call) is a TypeError naming it, and so is an
// option value of the wrong type (a RangeError when out of range; options.ts).
import { InvalidError, MnemoConnectionError, MnemoError, MnemoTimeoutError, errorFromResponse } from './errors.js';
import { OPERATIONS, Operations, type OperationName, type ParamType, type RequestOptions } from './generated.js';
import { HEADERS, MAX_MS, checkKind, checkOptions, checkWhole, isHeaderObject, isString, shown } from './options.js';

export interface ClientOptions {
  /** the server's root, e.g. http://127.0.0.1:8765 (default: $MNEMO_BASE_URL, else that) */
  baseURL?: string;
  /** sent as `Authorization: Bearer <apiKey>` (default: $MNEMO_API_KEY) */
  apiKey?: string;
  /** the fetch to use (default: the platform's) */
  fetch?: typeof fetch;
  /** retries of a 429 or 503 answer (default 2) */
  maxRetries?: number;
  /** per attempt, milliseconds (default 60,000) */
  timeoutMs?: number;
  /** the longest wait between attempts, whatever Retry-After says (default 30,000 ms) */
  maxRetryDelayMs?: number;
  /** headers added to every request */
  defaultHeaders?: Record<string, string>;
}

/** The names of ClientOptions (the adapters take them too, and pass them on). */
export const CLIENT_OPTIONS = ['baseURL', 'apiKey', 'fetch', 'maxRetries', 'timeoutMs', 'maxRetryDelayMs', 'defaultHeaders'] as const;
/** The names of the per-call RequestOptions. */
export const REQUEST_OPTIONS = ['headers', 'signal', 'timeoutMs', 'maxRetries'] as const;

const DEFAULT_BASE_URL = 'http://127.0.0.1:8765';

/** Whether a base URL is one fetch can reach: http or https ("localhost:8765" parses with the
 * scheme "localhost:"). */
function isHttpURL(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
}

/** The values of the options both the constructor and each call take. */
function checkAttemptOptions(what: string, options: { maxRetries?: unknown; timeoutMs?: unknown }): void {
  checkWhole(what, 'maxRetries', options.maxRetries, 0, MAX_MS);
  checkWhole(what, 'timeoutMs', options.timeoutMs, 1, MAX_MS);
}

/** The server's words for a JSON type (app/server/params.c: "limit: must be an integer"). */
const TYPE_WORDS: Record<ParamType, string> = {
  string: 'a string', integer: 'an integer', number: 'a number', boolean: 'true or false', object: 'an object', array: 'an array',
};

function fitsType(type: ParamType, v: unknown): boolean {
  switch (type) {
    case 'string': return typeof v === 'string';
    case 'integer': return Number.isInteger(v);
    case 'number': return typeof v === 'number' && Number.isFinite(v);
    case 'boolean': return typeof v === 'boolean';
    case 'object': return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'array': return Array.isArray(v);
  }
}

/** A query string carries text, which the server converts ("5" to 5, "true" to true): each value
 * is checked against its declared JSON types here instead, so a string for a number, 1 for a
 * boolean or a list for a word is refused as the server refuses it in a JSON body (InvalidError,
 * its message), not sent as text. Null and undefined are absent; an undeclared name is the
 * server's to refuse. */
function checkQueryTypes(types: Readonly<Record<string, readonly ParamType[]>>, params: object): void {
  for (const [name, v] of Object.entries(params)) {
    const declared = types[name];
    if (v === undefined || v === null || !declared || declared.some((t) => fitsType(t, v))) continue;
    const got = Array.isArray(v) ? 'array' : typeof v;
    throw new InvalidError(undefined, 'invalid', `${name}: must be ${TYPE_WORDS[declared[0]]}, got ${got}`);
  }
}

/** Whether a URL path carries `v` to the server as one segment. A session key may be any
 * string, but fetch resolves a "." or ".." segment (escaped too) and the server decodes %2F
 * before routing: such a value would reach another route. */
export function pathCarries(v: string): boolean {
  return v !== '.' && v !== '..' && !v.includes('/');
}

/** Path parameter `name` as one segment of the URL path; a value no path carries is refused
 * (InvalidError, nothing sent). */
function pathSegment(name: string, v: string): string {
  if (!pathCarries(v)) {
    const hint = name === 'session_id' ? "; the session's UUID can be (sessionResume({ session_id }) finds it)" : '';
    throw new InvalidError(undefined, 'invalid', `${name}: ${shown(v)} cannot be sent in a URL path ("/", "." and ".." are path syntax)${hint}`);
  }
  return encodeURIComponent(v);
}

/** The values of the constructor's options (their names are checked first). */
function checkClientOptions(options: ClientOptions, baseURL: string): void {
  checkAttemptOptions('MnemoClient', options);
  checkWhole('MnemoClient', 'maxRetryDelayMs', options.maxRetryDelayMs, 0, MAX_MS);
  checkKind('MnemoClient', 'baseURL', baseURL, isHttpURL, 'an http or https URL');
  checkKind('MnemoClient', 'apiKey', options.apiKey, isString, 'a string');
  checkKind('MnemoClient', 'fetch', options.fetch, (f) => typeof f === 'function', 'a function');
  checkKind('MnemoClient', 'defaultHeaders', options.defaultHeaders, isHeaderObject, HEADERS);
}

/** The values of the per-call options (their names are checked first). */
function checkRequestOptions(what: string, options: RequestOptions): void {
  checkAttemptOptions(what, options);
  checkKind(what, 'headers', options.headers, isHeaderObject, HEADERS);
  checkKind(what, 'signal', options.signal, (s) => s instanceof AbortSignal, 'an AbortSignal');
}

function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env?.[name] || undefined;
}

/** The wait a 429/503 asks for: Retry-After in seconds or as an HTTP date; else backoff. */
export function retryDelayMs(headers: Headers, attempt: number, maxMs: number): number {
  const h = headers.get('retry-after');
  let ms = NaN;
  if (h !== null) {
    ms = /^\s*\d+(\.\d+)?\s*$/.test(h) ? Number(h) * 1000 : Date.parse(h) - Date.now();
  }
  if (!Number.isFinite(ms) || ms < 0) ms = Math.min(500 * 2 ** attempt, 8000) * (0.75 + Math.random() * 0.5);
  return Math.min(ms, maxMs);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); reject(signal!.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** The later of two positions ("16/B374D848": two hex numbers; '' is none); answers may come
 * back out of order, and a position only moves forward. Text that is not a position is kept
 * out (the server checks what it is sent). */
function laterPosition(a: string, b: string): string {
  const parse = (p: string): bigint | undefined => {
    const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(p);
    return m ? (BigInt('0x' + m[1]) << 32n) | BigInt('0x' + m[2]) : undefined;
  };
  const x = parse(a), y = parse(b);
  if (y === undefined) return a;
  return x === undefined || y > x ? b : a;
}

/** A typed client of `mnemo serve`: one method per operation of the server's table. */
export class MnemoClient extends Operations {
  readonly baseURL: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  readonly maxRetryDelayMs: number;
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #headers: Record<string, string>;
  #position = '';

  constructor(options: ClientOptions = {}) {
    super();
    checkOptions('MnemoClient', options, CLIENT_OPTIONS);
    options ??= {};
    const baseURL = options.baseURL ?? env('MNEMO_BASE_URL') ?? DEFAULT_BASE_URL;
    checkClientOptions(options, baseURL);
    this.baseURL = baseURL.replace(/\/+$/, '');
    this.#apiKey = options.apiKey ?? env('MNEMO_API_KEY');
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.maxRetries = options.maxRetries ?? 2;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.#headers = { ...options.defaultHeaders };
  }

  /**
   * The latest `Mnemo-Position` an answer carried (a server with PostgreSQL read replicas sends
   * it; '' until one did): every request after it carries it back as `Mnemo-Read-After`, so
   * this client reads its own writes on any node, even through a replica that lags
   * (docs/scale-out.md#read-your-writes). Hand it to another client with readAfter().
   */
  get position(): string {
    return this.#position;
  }

  /** Makes this client's reads see everything up to `position` (another client's position). */
  readAfter(position: string): void {
    if (typeof position !== 'string') throw new TypeError(`readAfter: position must be a string, got ${typeof position}`);
    this.#position = laterPosition(this.#position, position);
  }

  protected async call(name: OperationName, pathArgs: string[], params: object | string | undefined, options: RequestOptions = {}): Promise<unknown> {
    checkOptions(`${name}: the per-call options`, options, REQUEST_OPTIONS);
    options ??= {};
    checkRequestOptions(`${name}: the per-call options`, options);
    const spec = OPERATIONS[name];
    let i = 0;
    const path = spec.path.replace(/\{([^}]+)\}/g, (_, name: string) => pathSegment(name, pathArgs[i++] ?? ''));
    const url = new URL(this.baseURL + path);
    const headers: Record<string, string> = { accept: 'application/json', ...this.#headers };
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    let body: string | undefined;
    if (spec.body === 'ndjson') {
      body = params as string;
      headers['content-type'] = 'application/x-ndjson';
    } else if (spec.body === 'json') {
      body = JSON.stringify(params ?? {});
      headers['content-type'] = 'application/json';
    } else if (params && typeof params === 'object') {
      checkQueryTypes(spec.query, params);
      // a query carries an object (a metadata filter) as its JSON text, a list comma-separated
      for (const [k, v] of Object.entries(params)) {
        if (v === undefined || v === null) continue;
        url.searchParams.set(k, Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : String(v));
      }
    }
    if (spec.stream) headers.accept = 'application/x-ndjson';
    const ownAfter = Object.keys(options.headers ?? {}).some((k) => k.toLowerCase() === 'mnemo-read-after');
    if (this.#position && !ownAfter) headers['mnemo-read-after'] = this.#position;
    Object.assign(headers, options.headers);
    return this.request(spec.method, url, headers, body, spec.stream, options);
  }

  /** Sends one request (retrying 429/503) and returns the parsed JSON (or the text when raw). */
  async request(method: string, url: URL, headers: Record<string, string>, body: string | undefined, raw: boolean, options: RequestOptions = {}): Promise<unknown> {
    checkOptions(`${method} ${url.pathname}`, options, REQUEST_OPTIONS);
    options ??= {};
    checkRequestOptions(`${method} ${url.pathname}`, options);
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let res: Response;
      let text: string;
      try {
        res = await this.#fetch(url, { method, headers, body, signal });
        this.#position = laterPosition(this.#position, res.headers.get('mnemo-position') ?? '');
        text = await res.text();
      } catch (e) {
        if (options.signal?.aborted) throw e;
        if (timeout.aborted) throw new MnemoTimeoutError(undefined, 'timeout', `${method} ${url.pathname}: no answer within ${timeoutMs} ms`);
        throw new MnemoConnectionError(undefined, 'connection', `${method} ${url.pathname}: ${(e as Error).cause ?? (e as Error).message}`);
      }
      if (res.ok) {
        if (raw) return text;
        try {
          return text ? JSON.parse(text) : {};
        } catch {
          throw new MnemoError(res.status, 'bad_response', `${method} ${url.pathname}: the answer is not JSON`);
        }
      }
      if ((res.status === 429 || res.status === 503) && attempt < maxRetries) {
        await sleep(retryDelayMs(res.headers, attempt, this.maxRetryDelayMs), options.signal);
        continue;
      }
      throw errorFromResponse(res.status, text, res.headers);
    }
  }
}
