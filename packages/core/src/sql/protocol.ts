import type {ResultCaps} from './execute.js';
import type {SqlParam} from './statement.js';

/** Messages between the pool (parent) and a sandbox worker process. */
export type ToWorker =
  | {type: 'run'; id: number; path: string; text: string; args: SqlParam[]; caps: ResultCaps}
  | {type: 'forget'; id: number; path: string};

export type FromWorker =
  | {type: 'ready'}
  | {type: 'result'; id: number; json: string}
  /** `userError`: the statement's fault (400); otherwise a bug in the worker (500). */
  | {type: 'error'; id: number; message: string; userError: boolean}
  | {type: 'forgotten'; id: number};
