// Shared by the http tests: where the real Grist documents are (copy them before opening). The one
// finder of every package's tests is `@gristlite/core/testing`.
export {copyFixture, corpusFiles, fixturePath as fixture, withFixtures} from '@gristlite/core/testing';

/** A handler's answer read whole: its text, parsed as JSON when it is JSON, and whether it streamed. */
export async function readAnswer(body: unknown): Promise<{text: string; json: unknown; streamed: boolean}> {
  let text = '';
  let streamed = false;
  if (typeof body === 'string') text = body;
  else if (body instanceof Uint8Array) text = Buffer.from(body).toString('utf8');
  else if (body && typeof (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === 'function') {
    streamed = true;
    const parts: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Uint8Array>) parts.push(Buffer.from(chunk));
    text = Buffer.concat(parts).toString('utf8');
  }
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON (a download): kept as text.
  }
  return {text, json, streamed};
}

/** The POST a Streamable HTTP client sends to /api/mcp: one JSON-RPC request, with `key`. */
export function mcpRequest(key: string, method: string, params: unknown) {
  return {
    method: 'POST',
    url: '/api/mcp',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: new TextEncoder().encode(JSON.stringify({jsonrpc: '2.0', id: 1, method, params})),
  };
}
