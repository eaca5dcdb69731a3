export {
  ChangeFeeds,
  type ChangesOptions,
  Subscription,
  type SubscribeOptions,
  type SubscriberAccess,
} from './subscriptions.js';
export {DEFAULT_FEED_SETTINGS, type ChangedRow, type DocChange, type FeedSettings, type TableChanges} from './types.js';
export {feedSettingsFromEnv} from './settings.js';
export type {ConditionMatches, FeedCondition} from './conditions.js';
export type {FeedSelection, StoredChange} from './filter.js';
