/** Every recorded scenario, in the order they run (one server for all, in both modes). */
import {accessMore} from './access-more.js';
import {accessRules} from './access-rules.js';
import {columns} from './columns.js';
import type {Scenario} from './common.js';
import {data} from './data.js';
import {home} from './home.js';
import {attachments, errors, lifecycle} from './misc.js';
import {records} from './records.js';
import {triggers} from './triggers.js';
import {webhooks} from './webhooks.js';

export type {Scenario} from './common.js';

export const SCENARIOS: Scenario[] = [
  home,
  records,
  columns,
  data,
  attachments,
  lifecycle,
  errors,
  webhooks,
  accessRules,
  accessMore,
  triggers,
];
