/**
 * What every part of core builds on and nothing else: the typed errors the HTTP layer maps to
 * statuses, ids in Grist's style, and integer settings read from an `env` the caller passes.
 */
export * from './errors.js';
export * from './ids.js';
export * from './settings.js';
