// errors.ts — the server's errors as exceptions. Every error the server sends is
// {"error":{"code","message"}} (OpenAI-shaped routes add "type" and "param"); `code` is mnemo's
// status name (docs/http-api.md, "Errors"), and each code has its own class.

/** An error answered by `mnemo serve`: the HTTP status, the server's code and message. */
export class MnemoError extends Error {
  override name = 'MnemoError';
  /** HTTP status; undefined when no answer came (MnemoConnectionError, MnemoTimeoutError) */
  readonly status: number | undefined;
  /** the server's code: invalid, not_found, busy, … */
  readonly code: string;
  /** the field the error is about, when the server names it (OpenAI-shaped routes) */
  readonly param: string | null;
  readonly headers: Headers | undefined;

  constructor(status: number | undefined, code: string, message: string, param: string | null = null, headers?: Headers) {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
    this.headers = headers;
  }
}

/** 400 invalid (a parameter out of range, a missing field; the message names it) */
export class InvalidError extends MnemoError { override name = 'InvalidError'; }
/** 400 bad_json: the body is not a JSON object */
export class BadJsonError extends InvalidError { override name = 'BadJsonError'; }
/** 401: a missing or wrong API key */
export class UnauthorizedError extends MnemoError { override name = 'UnauthorizedError'; }
/** 403: the key is bound to another namespace, or the request is refused */
export class ForbiddenError extends MnemoError { override name = 'ForbiddenError'; }
/** 404: no such session, message or route */
export class NotFoundError extends MnemoError { override name = 'NotFoundError'; }
/** 405 */
export class MethodNotAllowedError extends MnemoError { override name = 'MethodNotAllowedError'; }
/** 408: the request body did not arrive in time */
export class RequestTimeoutError extends MnemoError { override name = 'RequestTimeoutError'; }
/** 409: conflicts with stored data (an idempotency key reused for another message) */
export class ConflictError extends MnemoError { override name = 'ConflictError'; }
/** 410: the thread expired */
export class ExpiredError extends MnemoError { override name = 'ExpiredError'; }
/** 413: a value or the body over a limit */
export class TooBigError extends MnemoError { override name = 'TooBigError'; }
/** 429: too many requests in progress (retried first) */
export class RateLimitedError extends MnemoError { override name = 'RateLimitedError'; }
/** 503 busy: the database stayed locked (retried first) */
export class BusyError extends MnemoError { override name = 'BusyError'; }
/** 503 unavailable: a provider (summariser, embedder) failed, or the server is stopping */
export class UnavailableError extends MnemoError { override name = 'UnavailableError'; }
/** 500: io, corrupt, no_memory, internal … */
export class InternalError extends MnemoError { override name = 'InternalError'; }
/** No answer: the connection failed. */
export class MnemoConnectionError extends MnemoError { override name = 'MnemoConnectionError'; }
/** No answer within timeoutMs. */
export class MnemoTimeoutError extends MnemoConnectionError { override name = 'MnemoTimeoutError'; }

type ErrorClass = new (status: number | undefined, code: string, message: string, param?: string | null, headers?: Headers) => MnemoError;

const BY_CODE: Record<string, ErrorClass> = {
  invalid: InvalidError,
  bad_json: BadJsonError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  timeout: RequestTimeoutError,
  conflict: ConflictError,
  expired: ExpiredError,
  too_big: TooBigError,
  rate_limited: RateLimitedError,
  busy: BusyError,
  unavailable: UnavailableError,
};

const BY_STATUS: Record<number, ErrorClass> = {
  400: InvalidError, 401: UnauthorizedError, 403: ForbiddenError, 404: NotFoundError,
  405: MethodNotAllowedError, 408: RequestTimeoutError, 409: ConflictError, 410: ExpiredError,
  413: TooBigError, 429: RateLimitedError, 503: UnavailableError,
};

/** The exception for an error answer: by the server's code, else by the HTTP status. */
export function errorFromResponse(status: number, body: string, headers?: Headers): MnemoError {
  let code = '', message = '', param: string | null = null;
  try {
    const e = JSON.parse(body)?.error;
    if (e && typeof e === 'object') {
      code = typeof e.code === 'string' ? e.code : '';
      message = typeof e.message === 'string' ? e.message : '';
      param = typeof e.param === 'string' ? e.param : null;
    }
  } catch {
    // not JSON: keep the status and the start of the body
  }
  if (!message) message = `HTTP ${status}${body ? `: ${body.slice(0, 200)}` : ''}`;
  const Cls = BY_CODE[code] ?? BY_STATUS[status] ?? (status >= 500 ? InternalError : MnemoError);
  return new Cls(status, code || `http_${status}`, message, param, headers);
}
