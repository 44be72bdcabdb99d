// client.ts — MnemoClient: the transport under the generated methods (src/generated.ts). Builds
// the URL from the operation's path, sends GET/DELETE parameters in the query string and the
// others as a JSON body, adds the API key, turns error answers into typed exceptions
// (errors.ts) and retries 429 and 503 (nothing was done) after the server's Retry-After. An
// option name it does not know (constructor or per call) is a TypeError naming it (options.ts).
import { MnemoConnectionError, MnemoError, MnemoTimeoutError, errorFromResponse } from './errors.js';
import { OPERATIONS, Operations, type OperationName, type RequestOptions } from './generated.js';
import { checkOptions } from './options.js';

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

/** A typed client of `mnemo serve`: one method per operation of the server's table. */
export class MnemoClient extends Operations {
  readonly baseURL: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  readonly maxRetryDelayMs: number;
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #headers: Record<string, string>;

  constructor(options: ClientOptions = {}) {
    super();
    checkOptions('MnemoClient', options, CLIENT_OPTIONS);
    options ??= {};
    this.baseURL = (options.baseURL ?? env('MNEMO_BASE_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.#apiKey = options.apiKey ?? env('MNEMO_API_KEY');
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.maxRetries = options.maxRetries ?? 2;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.#headers = { ...options.defaultHeaders };
  }

  protected async call(name: OperationName, pathArgs: string[], params: object | string | undefined, options: RequestOptions = {}): Promise<unknown> {
    checkOptions(`${name}: the per-call options`, options, REQUEST_OPTIONS);
    options ??= {};
    const spec = OPERATIONS[name];
    let i = 0;
    const path = spec.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(pathArgs[i++] ?? ''));
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
      // a query carries an object (a metadata filter) as its JSON text, a list comma-separated
      for (const [k, v] of Object.entries(params)) {
        if (v === undefined || v === null) continue;
        url.searchParams.set(k, Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : String(v));
      }
    }
    if (spec.stream) headers.accept = 'application/x-ndjson';
    Object.assign(headers, options.headers);
    return this.request(spec.method, url, headers, body, spec.stream, options);
  }

  /** Sends one request (retrying 429/503) and returns the parsed JSON (or the text when raw). */
  async request(method: string, url: URL, headers: Record<string, string>, body: string | undefined, raw: boolean, options: RequestOptions = {}): Promise<unknown> {
    checkOptions(`${method} ${url.pathname}`, options, REQUEST_OPTIONS);
    options ??= {};
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let res: Response;
      let text: string;
      try {
        res = await this.#fetch(url, { method, headers, body, signal });
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
