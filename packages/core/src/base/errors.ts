/**
 * Typed errors thrown by core. The http layer maps `status` to the HTTP status and sends
 * Grist's body `{"error": message, "details"?: details}`. Anything else thrown is a bug (500).
 */
import {ApiError, BadRequest} from '@gristlite/formula';

// ApiError and BadRequest are the value model's (a bad column type is a 400 there too): one class each.
export {ApiError, BadRequest};
export class Unauthorized extends ApiError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(401, message, details);
  }
}
export class Forbidden extends ApiError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(403, message, details);
  }
}
export class NotFound extends ApiError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(404, message, details);
  }
}
export class PayloadTooLarge extends ApiError {
  constructor(message = 'request entity too large') {
    super(413, message);
  }
}
/** A call reached an engine after `engine.close()` (503: a server shutting down answers so). */
export class EngineClosed extends ApiError {
  constructor() {
    super(503, 'The gristlite engine is closed');
  }
}
export class TooManyRequests extends ApiError {
  constructor(message: string) {
    super(429, message);
  }
}

export class ServiceUnavailable extends ApiError {
  constructor(message: string) {
    super(503, message);
  }
}

/**
 * The document is held by another worker of a several-machine deployment: the request belongs
 * there (the http layer forwards it; an embedder sees a 503).
 */
export class HeldElsewhere extends ServiceUnavailable {
  constructor(readonly holder: string) {
    super('Document in flux - try again later');
  }
}

/**
 * A 503 for an error that means the process ran out of file descriptors (EMFILE/ENFILE), or
 * undefined: such a failure says nothing about the request, so it must never read as a 404 or 500.
 */
export function resourceShortage(e: unknown): ServiceUnavailable | undefined {
  const code = (e as {code?: unknown} | null)?.code;
  const message = String((e as {message?: unknown} | null)?.message ?? '');
  if (code === 'EMFILE' || code === 'ENFILE' || /\b(EMFILE|ENFILE)\b|too many open files/i.test(message)) {
    return new ServiceUnavailable('The server has too many open files right now; try again later');
  }
  return undefined;
}

/** Grist's wording for errors raised by its data engine. */
export function engineError(excName: string, message: string): BadRequest {
  return new BadRequest(`Error manipulating data: [Sandbox] ${excName} ${message}`);
}

/** Whether a value is an `ApiError` (also across package copies). */
export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

/**
 * A request value as JavaScript's `${v}` would show it, for error messages, without ever calling
 * the value's own methods: a JSON object may carry `toString`/`valueOf` keys that are not
 * functions, which makes `${v}` and `String(v)` throw (a 500). Objects read `[object Object]` and
 * lists their items joined with commas, as they do for ordinary values.
 */
export function shownValue(v: unknown, depth = 0): string {
  if (v === null || typeof v !== 'object') {
    return typeof v === 'symbol' ? (v.description ?? '') : String(v);
  }
  if (Array.isArray(v)) {
    return depth > 8 ? '' : v.map((x) => (x === null || x === undefined ? '' : shownValue(x, depth + 1))).join(',');
  }
  return '[object Object]';
}
