// gristlite's scenario for Grist's REST tests: copied over the file of the same name in a
// grist-core checkout (docs/grist-docapi.md). Select it with mocha's --grep "external gristlite".
import type {ScenarioDefinition, ScenarioOptions} from 'test/server/lib/docapi/helpers';

/**
 * Hook to allow adding extra DocApi scenarios in other versions of Grist (SaaS, full edition)
 */
export function getExtraScenarios(options: ScenarioOptions = {}): ScenarioDefinition[] {
  return [{name: 'external gristlite', mode: 'external', options}];
}
