/**
 * The one error class the value model raises on bad input (an unknown column type): a status
 * and Grist's message. `@gristlite/core` re-exports these two classes as the base of its own typed
 * errors, so an `ApiError` thrown here and one thrown in core are the same class (the http layer
 * maps `status` to the HTTP status).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A 400: the input (here, a column type string) is not valid. */
export class BadRequest extends ApiError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(400, message, details);
  }
}
