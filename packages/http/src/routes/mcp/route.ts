/**
 * `/api/mcp` (issue 42 §4): the Model Context Protocol over Streamable HTTP, stateless (D130).
 * Each POST gets a fresh SDK server and web-standard transport: the request is handed to it as
 * a WHATWG `Request` made from our plain one (only here: the rest of http never builds one), its
 * JSON body already read with the server's size limit, and its `Response` returned as ours.
 */
import * as v from 'valibot';
import {ApiError, BadRequest, HeldElsewhere, ServiceUnavailable, Unauthorized} from '@gristlite/core/internal';
import {RequestAborted} from '../../body.js';
import {ForwardTo} from '../../forward.js';
import {requestGateway} from './gateway.js';
import {MCP_DEFAULTS} from './settings.js';
import type {Route} from '../../route.js';
import {RawResponse, type RequestContext} from '../../types.js';

/** One JSON-RPC 2.0 message, or a batch of them (for the OpenAPI document). */
const JsonRpcMessage = v.looseObject({
  jsonrpc: v.literal('2.0'),
  id: v.optional(v.union([v.string(), v.number()])),
  method: v.optional(v.string()),
  params: v.optional(v.record(v.string(), v.unknown())),
});
const JsonRpcBody = v.union([JsonRpcMessage, v.array(JsonRpcMessage)]);

/** The headers the SDK's transport reads. */
const PASSED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'last-event-id'];

/** A JSON-RPC error answered without a transport (the body did not parse; a method it has no use for). */
function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}) {
  const body = JSON.stringify({jsonrpc: '2.0', error: {code, message}, id: null});
  return new RawResponse(status, body, {'Content-Type': 'application/json', ...headers});
}

/**
 * Stateless: no session to keep, so there is no stream to open with GET nor session to end with
 * DELETE; the SDK's client reads 405 as "no such stream" and goes on.
 */
function methodNotAllowed(): RawResponse {
  return jsonRpcError(405, -32000, 'Method not allowed.', {Allow: 'POST'});
}

async function handleMcp(ctx: RequestContext): Promise<RawResponse> {
  // An agent acts as a user: without a key there is nobody to act as (D130).
  if (ctx.principal.anonymous) {
    throw new Unauthorized('user not authorized: an API key is required (Authorization: Bearer <key>)');
  }
  let body: unknown;
  try {
    body = await ctx.json();
  } catch (e) {
    // Unparsable JSON is the protocol's parse error; a body over the limit stays a 413.
    if (e instanceof ApiError && e.status === 400 && !(e instanceof RequestAborted)) {
      return jsonRpcError(400, -32700, `Parse error: ${e.message}`);
    }
    throw e;
  }
  // Loaded on the first MCP request, not with the server (mcp/session.ts).
  const [{createMcpServer, toolError}, {WebStandardStreamableHTTPServerTransport}] = await Promise.all([
    import('./server.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]);
  const state: {forward?: unknown; unexpected?: unknown} = {};
  const single = !Array.isArray(body);
  const server = createMcpServer(
    requestGateway(ctx),
    {...MCP_DEFAULTS, ...ctx.options.mcp},
    {
      intercept(e) {
        if (e instanceof ForwardTo || e instanceof HeldElsewhere) {
          // Another worker holds the document: the whole request goes there (server.ts forwards
          // what a handler throws), unless a batch may already have written here.
          if (single) state.forward = e;
          return toolError(new ServiceUnavailable('Document in flux - try again later'));
        }
        if (!(e instanceof ApiError)) {
          // A bug, or a shortage of descriptors: answered as REST answers it (500 logged, or 503).
          state.unexpected ??= e;
          return toolError(new ApiError(500, 'internal error'));
        }
        return null;
      },
    },
  );
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  try {
    await server.connect(transport);
    const headers = new Headers();
    for (const name of PASSED_HEADERS) {
      const value = ctx.headers[name];
      if (value === undefined) continue;
      try {
        headers.set(name, value);
      } catch {
        throw new BadRequest(`Invalid ${name} header`);
      }
    }
    const request = new Request(`http://localhost${ctx.path}`, {method: 'POST', headers});
    const response = await transport.handleRequest(request, {parsedBody: body});
    if (state.unexpected !== undefined) throw state.unexpected;
    if (state.forward !== undefined) throw state.forward;
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name === 'content-type' ? 'Content-Type' : name] = value;
    });
    return new RawResponse(response.status, response.body ? await response.text() : '', out);
  } finally {
    await server.close();
  }
}

/** `/api/mcp`: POST answers the protocol; GET and DELETE say there is no stream nor session. */
export const mcpRoutes: Route[] = [
  {
    method: 'POST',
    path: '/api/mcp',
    tag: 'mcp',
    summary: 'Model Context Protocol (JSON-RPC 2.0 over Streamable HTTP, stateless) for agents',
    body: JsonRpcBody,
    handler: handleMcp,
  },
  {
    method: 'GET',
    path: '/api/mcp',
    tag: 'mcp',
    summary: 'No event stream: the MCP endpoint is stateless (always 405)',
    handler: async () => methodNotAllowed(),
  },
  {
    method: 'DELETE',
    path: '/api/mcp',
    tag: 'mcp',
    summary: 'No session to end: the MCP endpoint is stateless (always 405)',
    handler: async () => methodNotAllowed(),
  },
];
