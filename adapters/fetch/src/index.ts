/**
 * gristlite as a fetch-style handler: `(request: Request) => Promise<Response>`. Converts WHATWG
 * Request/Response to and from the plain objects of @gristlite/http; bodies stream both ways.
 */
import type {Handler, HttpResponse} from '@gristlite/http';

export type FetchHandler = (request: Request) => Promise<Response>;

function toStream(body: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const {value, done} = await it.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await it.return?.();
    },
  });
}

export function toResponse(out: HttpResponse): Response {
  const body = out.body;
  const init = {status: out.status, headers: out.headers};
  if (body === null || out.status === 204 || out.status === 304) return new Response(null, init);
  if (typeof body === 'string' || body instanceof Uint8Array) return new Response(body as BodyInit, init);
  return new Response(toStream(body), init);
}

export function toFetchHandler(handler: Handler): FetchHandler {
  return async (request) => {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      headers[key] = value;
    });
    // Keep the Host the client used (it selects the org by subdomain).
    headers.host ??= url.host;
    const body = request.body ? (request.body as unknown as AsyncIterable<Uint8Array>) : null;
    return toResponse(await handler({method: request.method, url: url.pathname + url.search, headers, body}));
  };
}
