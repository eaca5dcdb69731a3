import type { Route } from '../route.js';
import { homeRoutes } from './home.js';

/** The one route table. Order matters only where two patterns overlap (first match wins). */
export function allRoutes(): Route[] {
  return [...homeRoutes];
}
