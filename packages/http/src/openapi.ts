/** The OpenAPI 3.1 document, generated from the route table and its valibot schemas. */
import { toJsonSchema } from '@valibot/to-json-schema';
import type { Route } from './route.js';

export function openApiDocument(routes: readonly Route[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    if (r.internal) continue;
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const params = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const query = (r.query ?? []).map((name) => ({ name, in: 'query', required: false, schema: { type: 'string' } }));
    (paths[path] ??= {})[r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      operationId: `${r.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string) => (c ?? '').toUpperCase())}`,
      ...(params.length || query.length ? { parameters: [...params, ...query] } : {}),
      ...(r.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: toJsonSchema(r.body, { errorMode: 'ignore', target: 'draft-2020-12' }) } },
            },
          }
        : {}),
      responses: {
        '200': { description: 'Success' },
        default: {
          description: "Error, in Grist's shape",
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'gristlite', version, description: "Grist's REST API (v1.0.1), as served by gristlite." },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'string' }, details: { type: 'object' } },
        },
      },
    },
    security: [{ bearer: [] }, {}],
    paths,
  };
}
